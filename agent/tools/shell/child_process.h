#pragma once

#include "engine/process/process_runner.h"
#include "engine/process/tree_budget.h"

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace kwb::agent {

struct ChildSpec {
    std::vector<std::string> argv; // argv[0] is looked up on PATH when it has no '/'
    std::string workingDirectory;
    std::map<std::string, std::string> environment; // the complete environment, nothing inherited
    ResourceLimits limits;
    // What the child's whole tree may use (processes, memory, disk), watched from outside by a
    // TreeWatchdog; empty: nothing is watched (a trusted child).
    TreeBudget treeBudget;
    bool keepStdin = false; // false: stdin is /dev/null
};

struct ChildExit {
    bool exitedNormally = false;
    int exitCode = -1;
    int signal = 0;
    std::string limitExceeded; // set when the watchdog killed the tree
};

// A long-lived child (the agent's shell, a background job) in its own process group, stdout
// and stderr merged like a terminal's. A thread of its own forks it, drains its output and
// reaps it: the kernel sends the parent-death signal behind bubblewrap's --die-with-parent when
// the *thread* that forked dies, so a caller's short-lived thread must not be that thread.
// Destroying the object kills the whole tree.
class ChildProcess {
public:
    using OutputHandler = std::function<void(std::string_view)>; // on the owner thread
    using ExitHandler = std::function<void(const ChildExit&)>;   // after the output is drained

    // Returns once the child runs or failed to start (see startError()).
    ChildProcess(ChildSpec spec, OutputHandler onOutput, ExitHandler onExit = {});
    ~ChildProcess();
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;

    bool started() const { return pid_ > 0; }
    const std::string& startError() const { return startError_; }
    int pid() const { return pid_; }
    std::optional<ChildExit> exitStatus() const;
    bool waitForExit(std::chrono::milliseconds timeout) const;

    // False when the child is gone or does not read its stdin within `timeout`.
    bool write(std::string_view text, std::chrono::milliseconds timeout = std::chrono::seconds(5));

    // Signals the group and every descendant (a sandbox starts its own session, so its
    // processes are not in our group). Does nothing once the child has been reaped.
    void signalTree(int signal);

private:
    void ownerLoop(ChildSpec spec);

    OutputHandler onOutput_;
    ExitHandler onExit_;
    mutable std::mutex mutex_;
    mutable std::condition_variable changed_;
    bool startDone_ = false;
    int pid_ = -1;
    std::string startError_;
    int stdinFd_ = -1;
    bool stopRequested_ = false;
    bool reaped_ = false;
    std::optional<ChildExit> exit_;
    std::thread owner_;
};

} // namespace kwb::agent
