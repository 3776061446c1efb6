#pragma once

#include "engine/process/resource_limits.h"

#include <string>
#include <vector>

namespace kwb {

// How one child starts. Every place in kwb that starts a process (the process runner, the warm
// worker's line process, the agent's shell and background jobs) goes through spawnProcess(), so
// each child gets the same treatment:
// - its own process group (a kill of -pid reaches everything it forked);
// - an empty signal mask and default dispositions (the parent's blocked or ignored signals
//   survive exec otherwise), with SIGXFSZ ignored so a write past RLIMIT_FSIZE fails visibly;
// - no inherited descriptor but the three it is given, and a private channel at descriptor 3
//   when asked for (a host's stray descriptor must not reach a sandbox);
// - its resource limits;
// - a start error the caller can show: a missing program, a missing working directory, a
//   refused exec, reported through a close-on-exec pipe rather than as a child exiting 127.
struct SpawnSpec {
    std::vector<std::string> argv;        // argv[0] is looked up on PATH when it has no '/'
    std::string workingDirectory;         // empty: inherit
    std::vector<std::string> environment; // the complete environment, "KEY=value" each
    ResourceLimits limits;
    int stdinFd = -1;  // -1: /dev/null
    int stdoutFd = -1; // -1: /dev/null
    int stderrFd = -1; // -1: /dev/null; the same descriptor as stdoutFd merges the streams
    // -1: none. Otherwise it becomes descriptor 3 of the child. Unlike 0-2, bubblewrap's init
    // (PID 1 of a sandbox) does not keep it open, so code inside the sandbox cannot reach it
    // through /proc/1/fd (the warm worker's request and reply channel).
    int channelFd = -1;
    bool dieWithParent = false; // SIGKILL when the thread that spawned it exits
    // A child subreaper: what its descendants orphan (a double fork, a daemon) is reparented to
    // it, not to init, so it stays in its tree while it lives (untrusted trees).
    bool subreaper = false;
};

struct Spawned {
    int pid = -1;      // > 0 when the program runs
    std::string error; // why it did not start
    explicit operator bool() const { return pid > 0; }
};

// Forks and execs. The descriptors in `spec` stay open in the parent (the caller closes its
// copies of the child's ends). The child leads a new process group; it is not reaped here.
Spawned spawnProcess(const SpawnSpec& spec);

// Locates an executable on PATH; empty when absent.
std::string findExecutable(const std::string& name);

} // namespace kwb
