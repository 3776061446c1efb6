#pragma once

#include "engine/evaluation/evaluation_result.h"

#include <ostream>

namespace kwb::cli {

// The human summary of an evaluation: verdict, reward, stages with times, errors and timings.
void printEvaluation(std::ostream& out, const EvaluationResult& result);

} // namespace kwb::cli
