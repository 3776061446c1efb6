// A trace file a user opens (File > Open Trace, --trace, a dropped file): format detection, the
// record reader, and both Chrome trace-event readers (simdjson's in memory, nlohmann-json's
// streamed) on the same bytes.
#include "engine/timeline/trace_file.h"
#include "tests/fuzz/fuzz_input.h"

#include <filesystem>

using namespace kwb::timeline;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    (void)detectTraceFormat(kwb::fuzz::asText(data, size));
    const std::filesystem::path file = kwb::fuzz::asScratchFile("trace", ".json", data, size);
    for (FlatJsonParser parser : {FlatJsonParser::Fastest, FlatJsonParser::Nlohmann}) {
        const LoadedTrace loaded = loadTraceFile(file.string(), {}, {}, parser);
        // Every outcome is a timeline or a reason, never neither.
        if (!loaded.timeline && loaded.error.empty())
            __builtin_trap();
    }
    std::error_code ec;
    std::filesystem::remove(file, ec);
    return 0;
}
