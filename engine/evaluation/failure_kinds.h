#pragma once

#include <string_view>

namespace kwb {

// Failures of the evaluator itself rather than of the candidate (no Python, the harness or the
// engine broke): such an evaluation judged nothing, so it is no reward of -1, no history entry
// and no measurement.
inline bool isInfrastructureFailure(std::string_view failureKind) {
    return failureKind == "python_missing" || failureKind == "internal" ||
           failureKind == "harness_failed";
}

} // namespace kwb
