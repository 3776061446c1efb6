#include "agent/store/store_reader.h"

#include "agent/store/trajectory_store.h"

#include <filesystem>

namespace kwb::agent {

EpisodeListSnapshot readEpisodeList(const std::string& storePath) {
    EpisodeListSnapshot out;
    out.storePath = storePath;
    std::error_code ec;
    if (!std::filesystem::exists(storePath, ec))
        return out;
    auto store = TrajectoryStore::open(storePath);
    if (!store) {
        out.error = store.error().message;
        return out;
    }
    EpisodeFilter all;
    all.limit = 0;
    auto listed = store.value()->listEpisodes(all);
    if (!listed)
        out.error = listed.error().message;
    else
        out.episodes = std::move(listed).value();
    return out;
}

EpisodeSetSnapshot readEpisodes(const std::string& storePath, const std::vector<EpisodeId>& ids) {
    EpisodeSetSnapshot out;
    std::error_code ec;
    if (!std::filesystem::exists(storePath, ec)) {
        out.error = "no trajectory store at " + storePath;
        return out;
    }
    auto store = TrajectoryStore::open(storePath);
    if (!store) {
        out.error = store.error().message;
        return out;
    }
    for (EpisodeId id : ids) {
        auto loaded = store.value()->loadTrajectory(id);
        if (!loaded) {
            out.error = loaded.error().message;
            continue;
        }
        out.episodes.push_back(makeEpisodeSnapshot(std::move(loaded).value()));
    }
    return out;
}

} // namespace kwb::agent
