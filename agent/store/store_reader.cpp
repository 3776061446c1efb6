#include "agent/store/store_reader.h"

#include "agent/store/trajectory_store.h"

#include <filesystem>

namespace kwb::agent {

StoreForReading openStoreForReading(const std::string& storePath) {
    StoreForReading out;
    std::error_code ec;
    if (!std::filesystem::exists(storePath, ec)) {
        out.missing = true;
        out.error = "no trajectory store at " + storePath;
        return out;
    }
    auto store = TrajectoryStore::open(storePath);
    if (!store)
        out.error = store.error().message;
    else
        out.store = std::move(store).value();
    return out;
}

EpisodeListSnapshot readEpisodeList(const std::string& storePath) {
    EpisodeListSnapshot out;
    out.storePath = storePath;
    StoreForReading opened = openStoreForReading(storePath);
    if (!opened.store) {
        if (!opened.missing)
            out.error = opened.error;
        return out;
    }
    EpisodeFilter all;
    all.limit = 0;
    auto listed = opened.store->listEpisodes(all);
    if (!listed)
        out.error = listed.error().message;
    else
        out.episodes = std::move(listed).value();
    return out;
}

EpisodeSetSnapshot readEpisodes(const std::string& storePath, const std::vector<EpisodeId>& ids) {
    EpisodeSetSnapshot out;
    StoreForReading opened = openStoreForReading(storePath);
    if (!opened.store) {
        out.error = opened.error;
        return out;
    }
    for (EpisodeId id : ids) {
        auto loaded = opened.store->loadTrajectory(id);
        if (!loaded) {
            out.error = loaded.error().message;
            continue;
        }
        out.episodes.push_back(makeEpisodeSnapshot(std::move(loaded).value()));
    }
    return out;
}

} // namespace kwb::agent
