#include "engine/process/process_runner.h"

#include "engine/process/head_tail_capper.h"
#include "engine/process/tree_watchdog.h"

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace kwb {
namespace {

CapturedOutput captured(HeadTailCapper::Capped capped) {
    return {std::move(capped.text), capped.totalBytes, capped.truncated()};
}

void setNonBlocking(int fd) {
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

} // namespace

SpawnSpec spawnSpecFor(const ProcessSpec& spec) {
    SpawnSpec child;
    child.argv = spec.argv;
    child.workingDirectory = spec.workingDirectory;
    if (spec.inheritEnvironment) {
        child.environment = mergedEnvironment(spec.environmentOverrides);
    } else {
        child.environment = environmentStrings(spec.environmentOverrides);
    }
    child.limits = spec.limits;
    child.subreaper = spec.treeBudget.any();
    return child;
}

std::string ProcessResult::statusText() const {
    if (!started)
        return "could not start: " + startError;
    if (!limitExceeded.empty())
        return "killed: " + limitExceeded + " exceeded";
    if (cancelled)
        return "cancelled after " + std::to_string(elapsed.count()) + " ms (process group killed)";
    if (timedOut)
        return "timed out after " + std::to_string(elapsed.count()) + " ms (process group killed)";
    if (exitedNormally)
        return "exit code " + std::to_string(exitCode);
    const char* name = sigabbrev_np(terminatingSignal);
    return "killed by signal " + std::to_string(terminatingSignal) +
           (name ? std::string(" (SIG") + name + ")" : std::string());
}

ProcessResult runProcess(const ProcessSpec& spec) {
    ProcessResult result;
    const auto startTime = std::chrono::steady_clock::now();
    if (spec.argv.empty()) {
        result.startError = "empty command line";
        return result;
    }
    std::array<int, 2> outPipe{-1, -1}, errPipe{-1, -1}, inPipe{-1, -1};
    if (pipe2(outPipe.data(), O_CLOEXEC) || pipe2(errPipe.data(), O_CLOEXEC) ||
        pipe2(inPipe.data(), O_CLOEXEC)) {
        result.startError = std::string("pipe: ") + std::strerror(errno);
        for (int fd : {outPipe[0], outPipe[1], errPipe[0], errPipe[1], inPipe[0], inPipe[1]})
            if (fd >= 0)
                close(fd);
        return result;
    }
    SpawnSpec child = spawnSpecFor(spec);
    child.stdinFd = inPipe[0];
    child.stdoutFd = outPipe[1];
    child.stderrFd = errPipe[1];
    const Spawned spawned = spawnProcess(child);
    close(outPipe[1]);
    close(errPipe[1]);
    close(inPipe[0]);
    if (!spawned) {
        close(outPipe[0]);
        close(errPipe[0]);
        close(inPipe[1]);
        result.startError = spawned.error;
        return result;
    }
    const pid_t pid = spawned.pid;
    result.started = true;
    TreeWatchdog watchdog(pid, spec.treeBudget);

    // Small stdin payloads (scripts, JSON requests) fit the pipe buffer; bigger ones are written
    // as the child drains them in the poll loop below.
    std::size_t stdinOffset = 0;
    setNonBlocking(inPipe[1]);
    setNonBlocking(outPipe[0]);
    setNonBlocking(errPipe[0]);
    int stdinFd = inPipe[1];
    if (spec.stdinText.empty()) {
        close(stdinFd);
        stdinFd = -1;
    }

    HeadTailCapper outCollector(spec.outputLimitBytes), errCollector(spec.outputLimitBytes);
    int openStreams = 2;
    std::array<int, 2> fds{outPipe[0], errPipe[0]};
    std::array<char, 65536> buffer{};
    const auto deadline =
        spec.timeout ? startTime + *spec.timeout : std::chrono::steady_clock::time_point::max();
    int status = 0;
    bool childExited = false;
    auto drainDeadline = std::chrono::steady_clock::time_point::max();
    while (openStreams > 0) {
        if (!childExited && waitpid(pid, &status, WNOHANG) == pid) {
            // Grandchildren may hold the pipes open forever; give them a moment, not a hang.
            childExited = true;
            drainDeadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
        }
        if (std::chrono::steady_clock::now() >= drainDeadline)
            break;
        if (!childExited) {
            result.limitExceeded = watchdog.check();
            if (!result.limitExceeded.empty()) {
                kill(-pid, SIGKILL);
                watchdog.killAll(); // those that escaped the group with setsid
                break;
            }
        }
        std::array<pollfd, 3> pfds{};
        int count = 0;
        for (int fd : fds)
            if (fd >= 0)
                pfds[count++] = {fd, POLLIN, 0};
        if (stdinFd >= 0)
            pfds[count++] = {stdinFd, POLLOUT, 0};
        if (spec.stop.stop_requested()) {
            result.cancelled = true;
            break;
        }
        int waitMs = 20;
        if (spec.timeout) {
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) {
                result.timedOut = true;
                break;
            }
            waitMs = static_cast<int>(std::min<long long>(left.count(), waitMs));
        }
        int ready = poll(pfds.data(), count, waitMs);
        if (ready < 0 && errno != EINTR)
            break;
        for (int i = 0; i < count; ++i) {
            if (!pfds[i].revents)
                continue;
            if (pfds[i].fd == stdinFd) {
                ssize_t n = write(stdinFd, spec.stdinText.data() + stdinOffset,
                                  spec.stdinText.size() - stdinOffset);
                if (n > 0)
                    stdinOffset += static_cast<std::size_t>(n);
                if (n < 0 && errno != EAGAIN)
                    stdinOffset = spec.stdinText.size();
                if (stdinOffset >= spec.stdinText.size()) {
                    close(stdinFd);
                    stdinFd = -1;
                }
                continue;
            }
            ssize_t n = read(pfds[i].fd, buffer.data(), buffer.size());
            if (n > 0) {
                (pfds[i].fd == fds[0] ? outCollector : errCollector)
                    .append(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
            } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
                for (int& fd : fds)
                    if (fd == pfds[i].fd) {
                        close(fd);
                        fd = -1;
                    }
                --openStreams;
            }
        }
    }

    if (result.timedOut || result.cancelled || !result.limitExceeded.empty())
        kill(-pid, SIGKILL);
    while (!childExited) {
        const bool killed = result.timedOut || result.cancelled || !result.limitExceeded.empty();
        pid_t waited = waitpid(pid, &status, killed ? 0 : WNOHANG);
        if (waited == pid) {
            childExited = true;
            break;
        }
        if (waited < 0 && errno != EINTR)
            break;
        if (waited == 0) {
            if (std::chrono::steady_clock::now() >= deadline) {
                result.timedOut = true;
                kill(-pid, SIGKILL);
                continue;
            }
            usleep(2000);
        }
    }
    // The tree is killed even on a normal finish: a candidate may leave background children,
    // also outside the group.
    kill(-pid, SIGKILL);
    watchdog.killAll();
    result.ownProcessesStopped = watchdog.judgeKeeper().finding();
    for (int fd : fds)
        if (fd >= 0)
            close(fd);
    if (stdinFd >= 0)
        close(stdinFd);

    if (WIFEXITED(status)) {
        result.exitedNormally = true;
        result.exitCode = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        result.terminatingSignal = WTERMSIG(status);
    }
    result.out = captured(outCollector.take());
    result.err = captured(errCollector.take());
    result.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - startTime);
    return result;
}

} // namespace kwb
