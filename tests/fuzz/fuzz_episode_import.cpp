// An episode export file from elsewhere, imported into a store in memory.
#include "agent/store/episode_export.h"
#include "agent/store/trajectory_store.h"
#include "tests/fuzz/fuzz_input.h"

#include <sstream>

using namespace kwb::agent;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto store = TrajectoryStore::open(":memory:");
    if (!store)
        return 0;
    std::istringstream in(std::string(kwb::fuzz::asText(data, size)));
    auto imported = importEpisodes(*store.value(), in);
    if (imported)
        for (const EpisodeRecord& record : imported.value())
            (void)store.value()->loadTrajectory(record.id);
    return 0;
}
