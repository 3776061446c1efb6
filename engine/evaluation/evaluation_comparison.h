#pragma once

#include "engine/evaluation/evaluation_result.h"

#include <optional>
#include <string>
#include <vector>

namespace kwb {

// How one evaluation differs from the one before it: what the result panel's "vs previous"
// line says. A speed-up delta is empty when either side was not measured (a failed run has no
// speed-up, and 0 - 1.4 would read as a regression that never happened).
struct EvaluationComparison {
    int rewardDelta = 0;
    std::optional<double> speedupVsEagerDelta;
    std::optional<double> speedupVsCompileDelta;
    std::vector<std::string> flagsAdded; // codes present now, absent before
    std::vector<std::string> flagsRemoved;
};

EvaluationComparison compareEvaluations(const kwb::EvaluationResult& previous,
                                        const kwb::EvaluationResult& current);

} // namespace kwb
