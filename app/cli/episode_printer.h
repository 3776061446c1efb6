#pragma once

#include "agent/rollout/rollout_metrics.h"
#include "agent/store/episode_record.h"

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace kwb::cli {

// `text` safe to write to a terminal: control characters other than newline and tab (ESC, BEL,
// NUL, DEL, the C1 controls) become visible escapes ("\x1b", "\u009b"). A model or a server
// writes what is printed live and by `kwb episodes show`; raw escape sequences could recolour,
// retitle or overwrite what the terminal shows (hiding a tool call, say).
std::string terminalSafe(std::string_view text);

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
