#pragma once

#include <string_view>

namespace kwb {

// Failures of the evaluator itself rather than of the candidate (no Python, the harness or the
// engine broke): such an evaluation judged nothing, so it is no reward of -1, no history entry
// and no measurement.
inline bool isInfrastructureFailure(std::string_view failureKind) {
    // task_out_of_memory: the reference ran out of memory, which depends on what else held the
    // memory at the moment (other evaluations of a rollout), not on the candidate or the task.
    return failureKind == "python_missing" || failureKind == "internal" ||
           failureKind == "harness_failed" || failureKind == "task_out_of_memory";
}

// Failures of the task itself: it does not import, lacks a function, its initial inputs are
// wrong, its reference does not run, or its inputs do not fit this machine's evaluation budget.
// Only what the inspect stage finds counts (EvaluationResult::taskFailed): that process runs the
// reference alone, before any candidate code, so no candidate can cause it.
inline bool isTaskFailure(std::string_view failureKind) {
    return failureKind == "task_import" || failureKind == "task_missing_function" ||
           failureKind == "task_bad_init_inputs" || failureKind == "task_run" ||
           failureKind == "task_too_large";
}

} // namespace kwb
