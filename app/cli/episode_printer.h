#pragma once

#include "agent/store/episode_record.h"

#include <ostream>

namespace kwb::cli {

// One line per stored event ("  12 tool_call  Edit kernels/gelu.cu"), shared by the live view of
// `kwb agent` and by `kwb episodes show`.
void printEvent(std::ostream& out, const agent::EpisodeEvent& event);

// The episode's row: id, status, reward, task, model, turns, tokens, times.
void printEpisodeSummary(std::ostream& out, const agent::EpisodeRecord& episode);

} // namespace kwb::cli
