#pragma once

#include "engine/evaluation/evaluation_result.h"

#include <string>

namespace kwb::agent {

// The evaluation as the model reads it: reward and verdict first, then the stages, compiler
// diagnostics, failed checks, timings and integrity flags, and the log tail of a failed stage
// (where the compiler error or the traceback is).
std::string summarizeEvaluation(const EvaluationResult& result);

// Only what a compile tells: the compile stage, its diagnostics, and its log tail on failure.
std::string summarizeCompile(const EvaluationResult& result);

} // namespace kwb::agent
