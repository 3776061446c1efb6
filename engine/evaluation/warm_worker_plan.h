#pragma once

#include "engine/evaluation/harness_stage.h"
#include "engine/process/sandbox.h"

#include <nlohmann/json.hpp>

namespace kwb {

// How a warm worker serves one stage: the server it runs in, and what the stage child forked
// there does to become this workspace's stage.
//
// Where the kernel offers Landlock and the stage names shared roots, the server's sandbox binds
// those roots in place of this workspace's folders, so every workspace below them is served by
// one server (a stream of rollout episodes or KernelBench pairs then pays the torch import once,
// not once per workspace). The child moves into its workspace and restricts its writes to
// exactly what this stage's own sandbox would let it write (isolation/confinement.py), before
// any task or candidate code runs. Otherwise the server is this workspace's alone, as a cold
// stage's sandbox would be. KWB_SHARED_WORKERS=off keeps every server to one workspace.
struct WarmWorkerPlan {
    SandboxedCommand server;    // its command (argv, folder, environment, limits) keys the server
    bool shared = false;        // serves every workspace below the stage's shared roots
    nlohmann::json confinement; // the request's "confine": cwd, environment, writable, landlock
};

WarmWorkerPlan planWarmWorker(const HarnessStageSpec& spec);

// The arguments the fork server runs with (`-m kwb_harness.fork_server`, its channel).
const std::vector<std::string>& forkServerArguments();

} // namespace kwb
