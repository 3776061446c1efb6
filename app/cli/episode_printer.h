#pragma once

#include "agent/rollout/rollout_metrics.h"
#include "agent/store/episode_record.h"

#include <ostream>
#include <vector>

namespace kwb::cli {

// One line per stored event ("  12 tool_call  Edit kernels/gelu.cu"), shared by the live view of
// `kwb agent` and by `kwb episodes show`.
void printEvent(std::ostream& out, const agent::EpisodeEvent& event);

// The episode's row: id, status, reward, task, model, turns, tokens, times.
void printEpisodeSummary(std::ostream& out, const agent::EpisodeRecord& episode);

// The rollout metrics of `episodes` (`kwb episodes metrics`, `kwb runs metrics`): a table, one
// row per level and then all together, or with `asJson` one object {"overall", "by_level"}.
void printMetricsOf(std::ostream& out, const std::vector<agent::EpisodeRecord>& episodes,
                    bool asJson);

} // namespace kwb::cli
