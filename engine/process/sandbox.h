#pragma once

#include "engine/process/process_runner.h"

#include <string>
#include <vector>

namespace kwb {

// How untrusted code (a task, a candidate, a build of its sources) may run. Everything is
// read-only except the listed paths and a private /tmp; no network unless allowed.
struct SandboxPolicy {
    std::vector<std::string> writablePaths;
    // Paths that must stay visible although they lie in a hidden tree (the private /tmp hides
    // the host's /tmp, where a checkout, a venv or a workspace may live).
    std::vector<std::string> readOnlyPaths;
    // Bound read-only after the writable paths, so a file or folder inside a writable tree (a
    // workspace's protected files) stays read-only. Enforced only with bubblewrap.
    std::vector<std::string> readOnlyOverlays;
    // Folders shown empty (a small read-only tmpfs) although the read-only root holds them:
    // kwb's own source and resource trees (bundled solutions, the adversarial suite), of which a
    // stage needs only what readOnlyPaths binds back. Enforced only with bubblewrap.
    std::vector<std::string> hiddenPaths;
    bool allowGpu = false; // bind the NVIDIA device nodes
    bool allowNetwork = false;
    ResourceLimits limits;
    // The whole tree's budget, watched from outside (holds for root and without bubblewrap too):
    // live processes, private memory, and how much the writable paths' file systems may fill.
    std::size_t maxProcesses = 256;
    std::uint64_t memoryBytes = 0;
    std::uint64_t diskBytes = 0;
    // Size of the private /tmp (memory-backed). Enforced only with bubblewrap.
    std::uint64_t tmpBytes = 1ULL << 30;
};

// The size of the sandbox's private /dev/shm: a share of the disk budget (its pages belong to no
// process, so the memory budget never sees them), taken out of what the writable folders may
// fill; at most 256 MiB (stages pass no large data through it). Enforced only with bubblewrap.
std::uint64_t sharedMemoryBytes(const SandboxPolicy& policy);

struct SandboxedCommand {
    ProcessSpec spec;
    bool isolated = false;   // true: bubblewrap namespaces; false: rlimits only
    std::string description; // which sandbox ran, for the record: "bubblewrap (/usr/bin/bwrap)"
    std::string warning;     // set when isolation is weaker than asked for
};

// `path` with its folder resolved through symlinks but its file name kept: a venv's
// bin/python3 stays the venv's interpreter instead of collapsing into /usr/bin/python3.X.
std::string resolveFolderOf(const std::string& path);

// The bubblewrap to use: $KWB_BWRAP, else `bwrap` on PATH, else the one installed beside kwb
// (<prefix>/libexec/kernel-workbench/bwrap) for hosts without it. "" when there is none.
std::string bubblewrapPath();

// Whether bubblewrap exists and can create namespaces here (checked once per process).
bool bubblewrapUsable();

// Whether sandboxCommand isolates (bubblewrap namespaces), rather than only setting limits: false
// where no bubblewrap works or KWB_SANDBOX=rlimits-only asks for limits only.
bool sandboxIsolates();

// Whether this bubblewrap sizes a tmpfs (--size came with 0.7 and a setuid bubblewrap refuses
// it; checked once per process).
bool tmpfsSizeSupported();

// The policy's budget for a whole process tree: its limits, with the writable paths as the disk
// to watch (and the host's /tmp where the sandbox does not isolate: with bubblewrap the tree's
// /tmp is a sized tmpfs of its own), less the private /dev/shm's share.
TreeBudget treeBudgetFor(const SandboxPolicy& policy);

// Wraps `argv` so it runs under the policy. The command's environment is sandboxEnvironment()'s
// allow-list (inheritEnvironment off); callers add to environmentOverrides, never replace it. With
// bubblewrap: new PID/IPC/UTS (and network) namespaces, a read-only root and /dev, a sized
// /tmp and /dev/shm, all capabilities dropped, killed with its parent. Without it: the same rlimits
// and process watchdog, and a loud warning the caller must put in its result.
SandboxedCommand sandboxCommand(const std::vector<std::string>& argv,
                                const std::string& workingDirectory, const SandboxPolicy& policy);

} // namespace kwb
