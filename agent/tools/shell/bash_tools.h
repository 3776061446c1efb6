#pragma once

#include "agent/tools/shell/shell_sandbox.h"
#include "agent/tools/tool.h"

#include <chrono>
#include <memory>
#include <vector>

namespace kwb::agent {

struct BashToolOptions {
    std::chrono::milliseconds defaultTimeout = std::chrono::minutes(2);
    std::chrono::milliseconds maxTimeout = std::chrono::minutes(10);
    std::size_t sessionOutputBytes = 512 * 1024; // kept per command before the registry's cut
    std::size_t maxBackgroundJobs = 8;
    // Limits for the shell and its jobs; the workspace, Python and GPU come from the context.
    ShellSandboxOptions sandbox;
};

// Bash (one persistent shell session in the workspace sandbox; run_in_background starts a job),
// BashOutput (a job's new output) and KillBash. The three share the session and the job table,
// which live as long as the tools do: destroying them kills the shell and every job.
std::vector<std::unique_ptr<Tool>> makeBashTools(BashToolOptions options = {});

} // namespace kwb::agent
