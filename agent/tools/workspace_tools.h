#pragma once

#include "agent/tools/tool.h"

#include <memory>
#include <vector>

namespace kwb::agent {

// Compile (static checks and the build only), Verify (up to the correctness checks, reward 1 at
// most) and Profile (everything, the reward the run would get): the engine's Evaluator on the
// context's workspace with the context's options. The text is the summary for the model; the
// data is {"mode", "evaluation": the EvaluationResult JSON}.
std::vector<std::unique_ptr<Tool>> makeWorkspaceTools();

} // namespace kwb::agent
