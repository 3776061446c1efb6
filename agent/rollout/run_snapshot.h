#pragma once

#include "agent/rollout/rollout_metrics.h"
#include "agent/store/trajectory_store.h"

#include <memory>
#include <string>
#include <vector>

namespace kwb::agent {

// The GUI's reads of rollout runs (store_reader.h's counterpart for runs). They block on
// SQLite, so they run on the engine thread; each opens its own connection.

struct RunListSnapshot {
    std::string storePath;
    std::vector<RunRecord> runs; // newest first
    std::string error;
};

// One run as the Rollouts view shows it: its record, every episode it made (each attempt,
// oldest first) and the metrics over them, computed once here rather than in the view.
struct RunSnapshot {
    std::string storePath;
    RunRecord run;
    std::vector<EpisodeRecord> episodes;
    RolloutMetrics metrics;
    std::string error; // empty when the read worked
};

using RunSnapshotPtr = std::shared_ptr<const RunSnapshot>;

// A missing store is an empty list, not an error: browsing must not create a store.
RunListSnapshot readRunList(const std::string& storePath);
RunSnapshot readRun(const std::string& storePath, RunId run);

} // namespace kwb::agent
