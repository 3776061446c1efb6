#include "agent/tools/child_process.h"

#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <linux/close_range.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
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
    const std::string executable = spec.argv.empty() ? "" : findExecutable(spec.argv[0]);
    if (executable.empty())
        return startFailed(spec.argv.empty() ? "empty command line"
                                             : "'" + spec.argv[0] + "' not found");
    std::array<int, 2> out{-1, -1}, in{-1, -1}, execPipe{-1, -1};
    if (pipe2(out.data(), O_CLOEXEC) || pipe2(execPipe.data(), O_CLOEXEC) ||
        socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in.data())) {
        closeAll({out[0], out[1], execPipe[0], execPipe[1], in[0], in[1]});
        return startFailed(std::string("pipe: ") + std::strerror(errno));
    }
    const int devNull = open("/dev/null", O_RDONLY | O_CLOEXEC);

    std::vector<std::string> envStrings;
    for (const auto& [key, value] : spec.environment)
        envStrings.push_back(key + "=" + value);
    std::vector<char*> envp;
    for (auto& s : envStrings)
        envp.push_back(s.data());
    envp.push_back(nullptr);
    std::vector<char*> argv;
    for (auto& s : spec.argv)
        argv.push_back(s.data());
    argv.push_back(nullptr);

    const pid_t pid = fork();
    if (pid < 0) {
        closeAll({out[0], out[1], execPipe[0], execPipe[1], in[0], in[1], devNull});
        return startFailed(std::string("fork: ") + std::strerror(errno));
    }
    if (pid == 0) {
        setpgid(0, 0);
        kwb::applyLimits(spec.limits); // the engine's, shared with runProcess
        // Dispositions and the mask survive exec; the child starts from the defaults.
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        for (int s : {SIGPIPE, SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGCHLD})
            signal(s, SIG_DFL);
        signal(SIGXFSZ, SIG_IGN); // past RLIMIT_FSIZE a write fails with EFBIG, visibly
        dup2(spec.keepStdin ? in[1] : devNull, STDIN_FILENO);
        dup2(out[1], STDOUT_FILENO);
        dup2(out[1], STDERR_FILENO);
        // Descriptors the host process opened without O_CLOEXEC must not reach the sandbox.
        syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
        if (!spec.workingDirectory.empty() && chdir(spec.workingDirectory.c_str()) != 0) {
            const int code = errno;
            (void)!::write(execPipe[1], &code, sizeof code);
            _exit(127);
        }
        execve(executable.c_str(), argv.data(), envp.data());
        const int code = errno;
        (void)!::write(execPipe[1], &code, sizeof code);
        _exit(127);
    }
    setpgid(pid, pid);
    closeAll({out[1], in[1], execPipe[1], devNull});
    int execErrno = 0;
    const bool execFailed = read(execPipe[0], &execErrno, sizeof execErrno) == sizeof execErrno;
    close(execPipe[0]);
    if (execFailed) {
        waitpid(pid, nullptr, 0);
        closeAll({out[0], in[0]});
        return startFailed("cannot start " + executable + ": " + std::strerror(execErrno));
    }
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
    auto nextWatchdog = Clock::now();
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
        if (spec.maxDescendants > 0 && Clock::now() >= nextWatchdog) {
            nextWatchdog = Clock::now() + std::chrono::milliseconds(250);
            if (descendantPids(pid).size() + 1 > spec.maxDescendants) {
                limitExceeded = "process limit (" + std::to_string(spec.maxDescendants) + ")";
                signalTree(SIGKILL);
            }
        }
    }
    kill(-pid, SIGKILL); // background children of a finished child die with it
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
