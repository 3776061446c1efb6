#include "agent/tools/shell/child_process.h"

#include "engine/process/tree_watchdog.h"

#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace kwb::agent {
namespace {

using Clock = std::chrono::steady_clock;

void closeAll(std::initializer_list<int> fds) {
    for (int fd : fds)
        if (fd >= 0)
            close(fd);
}

} // namespace

ChildProcess::ChildProcess(ChildSpec spec, OutputHandler onOutput, ExitHandler onExit)
    : onOutput_(std::move(onOutput)), onExit_(std::move(onExit)) {
    owner_ = std::thread([this, spec = std::move(spec)]() mutable { ownerLoop(std::move(spec)); });
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return startDone_; });
}

ChildProcess::~ChildProcess() {
    {
        std::lock_guard lock(mutex_);
        stopRequested_ = true;
    }
    signalTree(SIGKILL);
    if (owner_.joinable())
        owner_.join();
    if (stdinFd_ >= 0)
        close(stdinFd_);
}

std::optional<ChildExit> ChildProcess::exitStatus() const {
    std::lock_guard lock(mutex_);
    return exit_;
}

bool ChildProcess::waitForExit(std::chrono::milliseconds timeout) const {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return exit_.has_value() || pid_ <= 0; });
}

bool ChildProcess::write(std::string_view text, std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (!text.empty()) {
        const ssize_t n = send(stdinFd_, text.data(), text.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            text.remove_prefix(static_cast<std::size_t>(n));
            continue;
        }
        if (n < 0 && errno != EAGAIN && errno != EINTR)
            return false;
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        if (left.count() <= 0)
            return false;
        pollfd pfd{stdinFd_, POLLOUT, 0};
        poll(&pfd, 1, static_cast<int>(std::min<long long>(left.count(), 100)));
    }
    return true;
}

void ChildProcess::signalTree(int signal) {
    std::lock_guard lock(mutex_);
    if (pid_ <= 0 || reaped_)
        return; // reaped: the pid may belong to someone else by now
    const std::vector<int> tree = descendantPids(pid_);
    kill(-pid_, signal);
    for (int p : tree)
        kill(p, signal);
}

void ChildProcess::ownerLoop(ChildSpec spec) {
    auto startFailed = [&](std::string error) {
        std::lock_guard lock(mutex_);
        startError_ = std::move(error);
        startDone_ = true;
        changed_.notify_all();
    };
    std::array<int, 2> out{-1, -1}, in{-1, -1};
    if (pipe2(out.data(), O_CLOEXEC) ||
        socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in.data())) {
        closeAll({out[0], out[1], in[0], in[1]});
        return startFailed(std::string("pipe: ") + std::strerror(errno));
    }
    SpawnSpec child;
    child.argv = spec.argv;
    child.workingDirectory = spec.workingDirectory;
    child.environment = environmentStrings(spec.environment);
    child.limits = spec.limits;
    // Orphans (a double fork, a daemon) stay below the child, where the watchdog sees them.
    child.subreaper = spec.treeBudget.any();
    child.stdinFd = spec.keepStdin ? in[1] : -1;
    child.stdoutFd = out[1]; // merged, as a terminal shows them
    child.stderrFd = out[1];
    const Spawned spawned = spawnProcess(child);
    closeAll({out[1], in[1]});
    if (!spawned) {
        closeAll({out[0], in[0]});
        return startFailed(spawned.error);
    }
    const pid_t pid = spawned.pid;
    fcntl(out[0], F_SETFL, fcntl(out[0], F_GETFL) | O_NONBLOCK);
    {
        std::lock_guard lock(mutex_);
        pid_ = pid;
        stdinFd_ = in[0];
        startDone_ = true;
        changed_.notify_all();
    }

    std::array<char, 65536> buffer{};
    int status = 0;
    bool eof = false;
    std::string limitExceeded;
    auto drainDeadline = Clock::time_point::max();
    TreeWatchdog watchdog(pid, spec.treeBudget);
    while (true) {
        if (!eof) {
            pollfd pfd{out[0], POLLIN, 0};
            poll(&pfd, 1, 100);
            while (true) {
                const ssize_t n = read(out[0], buffer.data(), buffer.size());
                if (n > 0) {
                    if (onOutput_)
                        onOutput_(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
                    continue;
                }
                if (n == 0 || (errno != EAGAIN && errno != EINTR))
                    eof = true;
                break;
            }
        } else {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        bool reaped = false;
        bool stop = false;
        {
            std::lock_guard lock(mutex_);
            if (!reaped_ && waitpid(pid, &status, WNOHANG) == pid) {
                reaped_ = true;
                // Stragglers that keep the pipe open get a moment, not forever.
                drainDeadline = Clock::now() + std::chrono::milliseconds(300);
            }
            reaped = reaped_;
            stop = stopRequested_;
        }
        if (reaped && (eof || Clock::now() >= drainDeadline))
            break;
        if (reaped)
            continue;
        if (stop)
            signalTree(SIGKILL);
        if (spec.treeBudget.any() && limitExceeded.empty()) {
            limitExceeded = watchdog.check(); // paces itself (every 100 ms)
            if (!limitExceeded.empty()) {
                watchdog.killAll();
                signalTree(SIGKILL);
            }
        }
    }
    kill(-pid, SIGKILL); // background children of a finished child die with it
    // ... and so do those that left its process group (setsid) and were orphaned.
    if (spec.treeBudget.any())
        watchdog.killAll();
    close(out[0]);
    ChildExit exit;
    exit.limitExceeded = limitExceeded;
    if (WIFEXITED(status)) {
        exit.exitedNormally = true;
        exit.exitCode = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        exit.signal = WTERMSIG(status);
    }
    {
        std::lock_guard lock(mutex_);
        exit_ = exit;
        changed_.notify_all();
    }
    if (onExit_)
        onExit_(exit);
}

} // namespace kwb::agent
