#include "agent/rollout/run_snapshot.h"

#include "agent/rollout/rollout_runner.h"
#include "agent/store/store_reader.h"

#include <algorithm>

namespace kwb::agent {

RunListSnapshot readRunList(const std::string& storePath) {
    RunListSnapshot out;
    out.storePath = storePath;
    StoreForReading opened = openStoreForReading(storePath);
    if (!opened.store) {
        if (!opened.missing)
            out.error = opened.error;
        return out;
    }
    // A run whose process died reads as interrupted here too, not running forever.
    (void)reconcileInterruptedRuns(*opened.store, storePath);
    auto listed = opened.store->listRuns();
    if (!listed)
        out.error = listed.error().message;
    else
        out.runs = std::move(listed).value();
    return out;
}

RunSnapshot readRun(const std::string& storePath, RunId run) {
    RunSnapshot out;
    out.storePath = storePath;
    StoreForReading opened = openStoreForReading(storePath);
    if (!opened.store) {
        out.error = opened.error;
        return out;
    }
    auto loaded = opened.store->loadRun(run);
    if (!loaded) {
        out.error = loaded.error().message;
        return out;
    }
    out.run = std::move(loaded).value();
    auto episodes = opened.store->listEpisodes(EpisodeFilter::everyEpisodeOf(run));
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
