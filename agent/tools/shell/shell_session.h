#pragma once

#include "agent/tools/shell/child_process.h"
#include "agent/tools/shell/shell_sandbox.h"
#include "engine/process/head_tail_capper.h"

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>

namespace kwb::agent {

struct ShellRunResult {
    std::string output; // stdout and stderr as a terminal shows them, head and tail kept
    std::size_t totalBytes = 0;
    bool truncated = false;
    std::optional<int> exitCode; // absent when the command did not finish
    bool timedOut = false;
    bool cancelled = false;
    std::string note; // what happened to the session, for the model ("the shell was restarted")
    std::chrono::milliseconds elapsed{0};
};

// One persistent `bash` in the workspace sandbox, so `cd` and `export` carry over between the
// agent's commands. Each command is sent on the shell's stdin wrapped so that it is read whole
// (a here-document), run by `eval` with stdin from /dev/null (a command cannot swallow the
// next one), and followed by an end marker with a random nonce that carries the exit code.
// A command past its timeout has its processes interrupted (SIGINT, then SIGKILL); a shell that
// does not come back is restarted, and the result says so. Dies with its owner.
class ShellSession {
public:
    explicit ShellSession(ShellSandboxOptions options, std::size_t outputLimitBytes = 512 * 1024);
    ~ShellSession();

    // One command at a time; a second caller waits.
    ShellRunResult run(const std::string& command, std::chrono::milliseconds timeout,
                       std::stop_token stop = {});

    // The shell's directory and exported variables, for a background job to start from.
    struct State {
        std::string directory;
        std::string exports; // `export -p`
    };
    std::optional<State> state();

    bool isolated() const { return isolated_; }
    const std::string& sandboxWarning() const { return warning_; }
    const ShellSandboxOptions& options() const { return options_; }

private:
    std::string start();                  // an error sentence, empty when it runs
    void stop();                          // kills the shell; the next run starts another
    void onOutput(std::string_view data); // owner thread of the child
    void scanForMarker();                 // with mutex_ held
    std::optional<int> waitForMarker(std::unique_lock<std::mutex>& lock,
                                     std::chrono::steady_clock::time_point deadline,
                                     std::stop_token stop);
    void interruptCommand(int signal);

    ShellSandboxOptions options_;
    std::size_t outputLimit_;
    bool isolated_ = false;
    std::string warning_;
    std::mutex runMutex_;

    std::unique_ptr<ChildProcess> child_;
    int shellPid_ = -1; // bash itself, below bubblewrap's processes

    std::mutex mutex_; // guards what the child's output thread touches
    std::condition_variable_any changed_;
    std::string marker_; // "\n__KWB_END_<nonce>_" while a command runs
    std::string scan_;   // output not yet known to be free of the marker
    HeadTailCapper output_;
    std::optional<HeadTailCapper::Capped> finished_;
    std::optional<int> exitCode_;
    bool shellExited_ = false;
    std::optional<ChildExit> shellExit_;
};

} // namespace kwb::agent
