#pragma once

#include "agent/tools/shell/child_process.h"

#include <string>
#include <vector>

namespace kwb::agent {

struct ShellSandboxOptions {
    std::string workspace;
    std::string python; // the task interpreter; its folder goes first on PATH. Empty: found
    bool allowGpu = false;
    ResourceLimits limits{/*cpuSeconds=*/3600, /*addressSpaceBytes=*/0, /*maxProcesses=*/0,
                          /*openFiles=*/4096, /*fileSizeBytes=*/4ULL << 30};
    std::size_t maxProcesses = 512;
    // The whole shell's tree (everything the agent starts) together; 0: the defaults
    // (engine/system/default_budgets.h), as for an evaluation.
    std::uint64_t memoryBytes = 0;
    std::uint64_t diskBytes = 0;
};

struct SandboxedShell {
    ChildSpec spec;
    bool isolated = false;
    std::string warning; // set when bubblewrap is missing: resource limits only
};

// `bash --noprofile --norc <arguments>` in the workspace sandbox (engine/process/sandbox.h): the
// workspace is the only writable host folder, its protected files are bound read-only over
// it, no network, a private /tmp that is also HOME (so tool caches never reach the user's real
// caches, which the evaluator trusts), and an environment built from a short allow-list, so the
// agent's API keys stay out of the model's reach.
SandboxedShell sandboxedBash(const ShellSandboxOptions& options,
                             const std::vector<std::string>& arguments);

} // namespace kwb::agent
