#include "engine/process/line_process.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

namespace kwb {

LineProcess::~LineProcess() {
    kill();
}

bool LineProcess::start(const ProcessSpec& spec, const std::string& stderrPath,
                        std::string* error) {
    if (spec.argv.empty()) {
        if (error)
            *error = "no command";
        return false;
    }
    int input[2], output[2];
    if (pipe2(input, O_CLOEXEC) != 0) {
        if (error)
            *error = std::string("pipe: ") + std::strerror(errno);
        return false;
    }
    if (pipe2(output, O_CLOEXEC) != 0) {
        if (error)
            *error = std::string("pipe: ") + std::strerror(errno);
        close(input[0]), close(input[1]);
        return false;
    }
    const int errFd = open(stderrPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    SpawnSpec child = spawnSpecFor(spec);
    child.stdinFd = input[0];
    child.stdoutFd = output[1];
    child.stderrFd = errFd >= 0 ? errFd : output[1];
    child.dieWithParent = true; // the worker must not outlive the engine that feeds it
    const Spawned spawned = spawnProcess(child);
    close(input[0]);
    close(output[1]);
    if (errFd >= 0)
        close(errFd);
    if (!spawned) {
        if (error)
            *error = spawned.error;
        close(input[1]), close(output[0]);
        return false;
    }
    const pid_t pid = spawned.pid;
    pid_ = pid;
    toChild_ = input[1];
    fromChild_ = output[0];
    ended_ = false;
    return true;
}

bool LineProcess::writeLine(const std::string& line) {
    if (toChild_ < 0)
        return false;
    std::string data = line + "\n";
    std::size_t written = 0;
    while (written < data.size()) {
        const ssize_t n = ::write(toChild_, data.data() + written, data.size() - written);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false; // EPIPE: the worker is gone (SIGPIPE is ignored by the engine)
        written += static_cast<std::size_t>(n);
    }
    return true;
}

std::optional<std::string> LineProcess::readLine(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
        if (const auto newline = pending_.find('\n'); newline != std::string::npos) {
            std::string line = pending_.substr(0, newline);
            pending_.erase(0, newline + 1);
            return line;
        }
        if (fromChild_ < 0 || ended_)
            return std::nullopt;
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0)
            return std::nullopt;
        pollfd fd{fromChild_, POLLIN, 0};
        const int ready = poll(&fd, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
        if (ready < 0 && errno != EINTR) {
            ended_ = true;
            return std::nullopt;
        }
        if (ready <= 0)
            continue;
        char buffer[4096];
        const ssize_t n = ::read(fromChild_, buffer, sizeof buffer);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0) {
            ended_ = true;
            continue; // a last complete line may still be pending
        }
        pending_.append(buffer, static_cast<std::size_t>(n));
    }
}

bool LineProcess::running() {
    if (pid_ <= 0)
        return false;
    int status = 0;
    const pid_t done = waitpid(pid_, &status, WNOHANG);
    if (done == pid_) {
        pid_ = -1;
        return false;
    }
    return true;
}

void LineProcess::kill() {
    if (toChild_ >= 0) {
        close(toChild_);
        toChild_ = -1;
    }
    if (pid_ > 0) {
        ::kill(-pid_, SIGKILL);
        ::kill(pid_, SIGKILL);
        int status = 0;
        while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
        }
        pid_ = -1;
    }
    if (fromChild_ >= 0) {
        close(fromChild_);
        fromChild_ = -1;
    }
    ended_ = true;
}

} // namespace kwb
