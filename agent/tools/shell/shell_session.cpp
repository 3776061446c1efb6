#include "agent/tools/shell/shell_session.h"

#include "engine/process/process_table.h"

#include <csignal>
#include <cstdio>
#include <random>

namespace kwb::agent {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

std::string randomNonce() {
    std::random_device device;
    char text[40];
    std::snprintf(text, sizeof text, "%08x%08x%08x", device(), device(), device());
    return text;
}

// The first child of `parent` in /proc, with its command name.
std::pair<int, std::string> firstChildOf(int parent) {
    for (const ProcessEntry& process : readProcessTable())
        if (process.parentPid == parent)
            return {process.pid, process.name};
    return {-1, {}};
}

} // namespace

ShellSession::ShellSession(ShellSandboxOptions options, std::size_t outputLimitBytes)
    : options_(std::move(options)), outputLimit_(outputLimitBytes), output_(outputLimitBytes) {}

ShellSession::~ShellSession() {
    stop();
}

void ShellSession::stop() {
    std::unique_ptr<ChildProcess> child = std::move(child_);
    child.reset(); // kills the tree and joins its thread; mutex_ must not be held here
    shellPid_ = -1;
    std::lock_guard lock(mutex_);
    marker_.clear();
    scan_.clear();
    output_.take();
    finished_.reset();
    exitCode_.reset();
    shellExited_ = false;
    shellExit_.reset();
}

void ShellSession::onOutput(std::string_view data) {
    std::lock_guard lock(mutex_);
    if (marker_.empty()) {
        output_.append(data); // from a process left running in the background
        return;
    }
    scan_.append(data);
    scanForMarker();
}

void ShellSession::scanForMarker() {
    const std::size_t at = scan_.find(marker_);
    if (at == std::string::npos) {
        // Keep what could be the start of a marker split across reads.
        const std::size_t keep = marker_.size() + 16;
        if (scan_.size() > keep) {
            output_.append(std::string_view(scan_).substr(0, scan_.size() - keep));
            scan_.erase(0, scan_.size() - keep);
        }
        return;
    }
    const std::size_t digits = at + marker_.size();
    const std::size_t end = scan_.find("__\n", digits);
    if (end == std::string::npos) {
        output_.append(std::string_view(scan_).substr(0, at));
        scan_.erase(0, at);
        return;
    }
    int code = -1;
    try {
        code = std::stoi(scan_.substr(digits, end - digits));
    } catch (...) {
    }
    output_.append(std::string_view(scan_).substr(0, at));
    const std::string rest = scan_.substr(end + 3);
    finished_ = output_.take();
    exitCode_ = code;
    marker_.clear();
    scan_.clear();
    output_.append(rest);
    changed_.notify_all();
}

std::optional<int> ShellSession::waitForMarker(std::unique_lock<std::mutex>& lock,
                                               Clock::time_point deadline, std::stop_token stop) {
    changed_.wait_until(lock, stop, deadline,
                        [&] { return finished_.has_value() || shellExited_; });
    return finished_ ? exitCode_ : std::nullopt;
}

void ShellSession::interruptCommand(int signal) {
    if (shellPid_ <= 0)
        return;
    // The shell itself only ever gets SIGINT: its trap ends the command list, and it stays
    // alive. It is signalled before the command's processes: bash runs the trap once its
    // foreground child ends, so the interrupt must already be pending then. Signalled after
    // them, bash could see the child die and run the list's next command first (seen on a
    // loaded CI machine: `sleep 30; echo never` printed "never").
    const std::vector<int> descendants = descendantPids(shellPid_);
    kill(shellPid_, SIGINT);
    for (int pid : descendants)
        kill(pid, signal);
}

std::string ShellSession::start() {
    SandboxedShell shell = sandboxedBash(options_, {});
    shell.spec.keepStdin = true;
    isolated_ = shell.isolated;
    warning_ = shell.warning;
    child_ = std::make_unique<ChildProcess>(
        shell.spec, [this](std::string_view data) { onOutput(data); },
        [this](const ChildExit& exit) {
            std::lock_guard lock(mutex_);
            shellExited_ = true;
            shellExit_ = exit;
            changed_.notify_all();
        });
    if (!child_->started()) {
        const std::string error = child_->startError();
        child_.reset();
        return "cannot start the shell: " + error;
    }
    // Bubblewrap runs as the sandbox's init with bash below it; signals for a command go to
    // bash's descendants, never to bash or bubblewrap.
    shellPid_ = child_->pid();
    const auto deadline = Clock::now() + 30s;
    const std::string nonce = randomNonce();
    {
        std::lock_guard lock(mutex_);
        marker_ = "\n__KWB_END_" + nonce + "_";
    }
    child_->write("printf '\\n__KWB_END_" + nonce + "_%d__\\n' 0\n");
    std::unique_lock lock(mutex_);
    if (!waitForMarker(lock, deadline, {})) {
        std::string said = output_.take().text + scan_;
        lock.unlock();
        stop();
        return "the shell did not start" + (said.empty() ? std::string() : ": " + said);
    }
    finished_.reset();
    lock.unlock();
    for (int depth = 0; isolated_ && depth < 4; ++depth) {
        const auto [pid, name] = firstChildOf(shellPid_);
        if (pid < 0)
            break;
        shellPid_ = pid;
        if (name != "bwrap")
            break;
    }
    return {};
}

ShellRunResult ShellSession::run(const std::string& command, std::chrono::milliseconds timeout,
                                 std::stop_token stop) {
    std::lock_guard runLock(runMutex_);
    const auto started = Clock::now();
    ShellRunResult result;
    auto finish = [&](HeadTailCapper::Capped taken) {
        result.output = std::move(taken.text);
        result.totalBytes = taken.totalBytes;
        result.truncated = taken.omittedBytes > 0;
        result.elapsed =
            std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
        return result;
    };
    if (child_ && child_->exitStatus())
        this->stop();
    if (!child_) {
        if (std::string error = start(); !error.empty()) {
            result.note = error;
            return finish({});
        }
    }

    std::string text = command;
    std::erase(text, '\0');
    const std::string nonce = randomNonce();
    // Sourced rather than eval'd inside a function: `declare` stays global, and the INT trap's
    // `return` ends the sourced command list the way Ctrl-C ends a terminal's. The trap is set
    // again every time because bash skips a trap whose last run ended in such a `return`.
    const std::string wrapper = "IFS= read -r -d '' __kwb_cmd <<'__KWB_CMD_" + nonce +
                                "' || true\n" + text + "\n__KWB_CMD_" + nonce +
                                "\ntrap 'return 130 2>/dev/null' INT; . <(printf '%s\\n' "
                                "\"$__kwb_cmd\") < /dev/null\nprintf '\\n__KWB_END_" +
                                nonce + "_%d__\\n' \"$?\"\n";
    {
        std::lock_guard lock(mutex_);
        marker_ = "\n__KWB_END_" + nonce + "_";
        scan_.clear();
        finished_.reset();
        exitCode_.reset();
    }
    const bool sent = child_->write(wrapper);
    std::unique_lock lock(mutex_);
    std::optional<int> code =
        sent ? waitForMarker(lock, started + timeout, stop) : std::optional<int>();
    if (code) {
        result.exitCode = code;
        return finish(std::move(*finished_));
    }
    if (shellExited_ || !sent) {
        if (shellExit_ && shellExit_->exitedNormally)
            result.exitCode = shellExit_->exitCode;
        const std::string limit = shellExit_ ? shellExit_->limitExceeded : std::string();
        result.note =
            (limit.empty()
                 ? "the shell exited" +
                       (result.exitCode ? " (exit code " + std::to_string(*result.exitCode) + ")"
                                        : std::string())
                 : "the shell and everything it started were stopped: " + limit + " exceeded") +
            "; the next command starts a new shell in the workspace, with the "
            "default directory and environment";
        HeadTailCapper::Capped taken = output_.take();
        taken.text += scan_;
        lock.unlock();
        this->stop();
        return finish(std::move(taken));
    }

    // Past the timeout (or cancelled): interrupt as Ctrl-C would (the command's processes and
    // the shell, whose trap ends the command list), then kill what is left.
    result.timedOut = !stop.stop_requested();
    result.cancelled = stop.stop_requested();
    lock.unlock();
    interruptCommand(SIGINT);
    lock.lock();
    code = waitForMarker(lock, Clock::now() + 2s, {});
    if (!code && !shellExited_) {
        lock.unlock();
        interruptCommand(SIGKILL);
        lock.lock();
        code = waitForMarker(lock, Clock::now() + 2s, {});
    }
    if (code) {
        result.exitCode = code;
        result.note = "the command was interrupted; the shell session is still running, with "
                      "its directory and environment";
        return finish(std::move(*finished_));
    }
    HeadTailCapper::Capped taken = output_.take();
    taken.text += scan_;
    lock.unlock();
    this->stop();
    std::string error = start();
    result.note = error.empty()
                      ? "the shell did not respond to the interrupt, so it was restarted: "
                        "the directory and environment are back to the defaults"
                      : "the shell did not respond and could not be restarted: " + error;
    return finish(std::move(taken));
}

std::optional<ShellSession::State> ShellSession::state() {
    // Output a background process printed since the last command comes first; skip past it.
    const std::string tag = "__KWB_STATE__";
    ShellRunResult r = run("printf '" + tag + "%s\\n' \"$PWD\"; export -p", 10s);
    const auto at = r.output.rfind(tag);
    if (!r.exitCode || *r.exitCode != 0 || r.truncated || at == std::string::npos)
        return std::nullopt;
    const auto newline = r.output.find('\n', at);
    if (newline == std::string::npos)
        return std::nullopt;
    return State{r.output.substr(at + tag.size(), newline - at - tag.size()),
                 r.output.substr(newline + 1)};
}

} // namespace kwb::agent
