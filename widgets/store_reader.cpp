#include "widgets/store_reader.h"

#include "agent/trajectory_store.h"
#include "engine/user_directories.h"

#include <filesystem>

namespace kwb::ui {

std::string defaultTrajectoryStorePath() {
    return (std::filesystem::path(kwb::stateDirectory()) / "trajectories.db").string();
}

EpisodeListSnapshot readEpisodeList(const std::string& storePath) {
    EpisodeListSnapshot out;
    out.storePath = storePath;
    std::error_code ec;
    if (!std::filesystem::exists(storePath, ec))
        return out;
    auto store = agent::TrajectoryStore::open(storePath);
    if (!store) {
        out.error = store.error().message;
        return out;
    }
    agent::EpisodeFilter all;
    all.limit = 0;
    auto listed = store.value()->listEpisodes(all);
    if (!listed)
        out.error = listed.error().message;
    else
        out.episodes = std::move(listed).value();
    return out;
}

EpisodeSetSnapshot readEpisodes(const std::string& storePath,
                                const std::vector<agent::EpisodeId>& ids) {
    EpisodeSetSnapshot out;
    std::error_code ec;
    if (!std::filesystem::exists(storePath, ec)) {
        out.error = "no trajectory store at " + storePath;
        return out;
    }
    auto store = agent::TrajectoryStore::open(storePath);
    if (!store) {
        out.error = store.error().message;
        return out;
    }
    for (agent::EpisodeId id : ids) {
        auto loaded = store.value()->loadTrajectory(id);
        if (!loaded) {
            out.error = loaded.error().message;
            continue;
        }
        out.episodes.push_back(makeEpisodeSnapshot(std::move(loaded).value()));
    }
    return out;
}

} // namespace kwb::ui
