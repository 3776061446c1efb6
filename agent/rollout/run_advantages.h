#pragma once

#include "agent/store/trajectory_store.h"

#include <string>

namespace kwb::agent {

// Computes and stores (TrajectoryStore::storeAdvantages) the training values of run `run`'s
// scored episodes: GRPO's advantage within each task's group and PPO's returns and GAE per model
// turn. Only task `task`'s group when it is given (a rollout calls it as each sample is scored),
// else every group (a resume, for runs recorded before the values were stored). A group is
// complete once `episodesPerTask` of its samples are scored. Returns the episodes written.
StoreResult<int> storeRunAdvantages(TrajectoryStore& store, RunId run, int episodesPerTask,
                                    const std::string& task = {});

// The same values computed from the run's episodes, without the store.
std::vector<EpisodeAdvantage> runAdvantages(const std::vector<EpisodeRecord>& episodes, RunId run,
                                            int episodesPerTask, const std::string& task = {});

// One episode's values as a rollout stores them, from its reward and its model turns.
EpisodeAdvantage episodeAdvantage(const EpisodeRecord& episode, RunId run, double groupAdvantage,
                                  int groupSize, bool groupComplete);

} // namespace kwb::agent
