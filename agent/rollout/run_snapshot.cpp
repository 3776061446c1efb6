#include "agent/rollout/run_snapshot.h"

#include <algorithm>
#include <filesystem>

namespace kwb::agent {

RunListSnapshot readRunList(const std::string& storePath) {
    RunListSnapshot out;
    out.storePath = storePath;
    std::error_code ec;
    if (!std::filesystem::exists(storePath, ec))
        return out;
    auto store = TrajectoryStore::open(storePath);
    if (!store) {
        out.error = store.error().message;
        return out;
    }
    auto listed = store.value()->listRuns();
    if (!listed)
        out.error = listed.error().message;
    else
        out.runs = std::move(listed).value();
    return out;
}

RunSnapshot readRun(const std::string& storePath, RunId run) {
    RunSnapshot out;
    out.storePath = storePath;
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
    auto loaded = store.value()->loadRun(run);
    if (!loaded) {
        out.error = loaded.error().message;
        return out;
    }
    out.run = std::move(loaded).value();
    EpisodeFilter mine;
    mine.runId = run;
    mine.limit = 0;
    auto episodes = store.value()->listEpisodes(mine);
    if (!episodes) {
        out.error = episodes.error().message;
        return out;
    }
    out.episodes = std::move(episodes).value();
    // The store lists newest first; a run reads in the order its episodes began.
    std::reverse(out.episodes.begin(), out.episodes.end());
    out.metrics = metricsOfRecords(out.episodes);
    return out;
}

} // namespace kwb::agent
