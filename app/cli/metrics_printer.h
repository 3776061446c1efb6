#pragma once

#include "agent/rollout/rollout_metrics.h"

#include <ostream>

namespace kwb::cli {

// The rollout metrics as a table: one row per level, then all levels together.
void printMetrics(std::ostream& out, const agent::RolloutMetrics& metrics);

} // namespace kwb::cli
