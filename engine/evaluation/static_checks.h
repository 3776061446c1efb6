#pragma once

#include "engine/evaluation/evaluation_result.h"

#include <string>
#include <vector>

namespace kwb {

// Checks on the sources, before anything runs. `fatal` is set when the candidate cannot be
// evaluated at all (no ModelNew); flags carry findings with a severity.
struct StaticCheckReport {
    std::string fatal;
    std::vector<IntegrityFlag> flags;

    std::string summary() const;
};

StaticCheckReport runStaticChecks(const std::string& referencePath,
                                  const std::string& candidatePath, bool workspaceMode);

} // namespace kwb
