#include "engine/process/line_process.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
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
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
        if (error)
            *error = std::string("socketpair: ") + std::strerror(errno);
        return false;
    }
    const int logFd = open(stderrPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    SpawnSpec child = spawnSpecFor(spec);
    child.stdinFd = -1; // /dev/null
    child.stdoutFd = logFd;
    child.stderrFd = logFd;
    child.channelFd = pair[1];
    child.dieWithParent = true; // the worker must not outlive the engine that feeds it
    const Spawned spawned = spawnProcess(child);
    close(pair[1]);
    if (logFd >= 0)
        close(logFd);
    if (!spawned) {
        if (error)
            *error = spawned.error;
        close(pair[0]);
        return false;
    }
    pid_ = spawned.pid;
    channel_ = pair[0];
    ended_ = false;
    pending_.clear();
    scanned_ = 0;
    return true;
}

bool LineProcess::writeLine(const std::string& line) {
    if (channel_ < 0)
        return false;
    std::string data = line + "\n";
    std::size_t written = 0;
    while (written < data.size()) {
        const ssize_t n =
            ::send(channel_, data.data() + written, data.size() - written, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false; // EPIPE: the worker is gone
        written += static_cast<std::size_t>(n);
    }
    return true;
}

std::optional<std::string> LineProcess::readLine(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
        // Only what arrived since the last look is searched: a long line costs linear time.
        if (const auto newline = pending_.find('\n', scanned_); newline != std::string::npos) {
            std::string line = pending_.substr(0, newline);
            pending_.erase(0, newline + 1);
            scanned_ = 0;
            return line;
        }
        scanned_ = pending_.size();
        if (pending_.size() > kMaxLineBytes) {
            // No reply is this long: whatever writes it is not the server speaking the protocol.
            pending_.clear();
            scanned_ = 0;
            ended_ = true;
        }
        if (channel_ < 0 || ended_)
            return std::nullopt;
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0)
            return std::nullopt;
        pollfd fd{channel_, POLLIN, 0};
        const int ready = poll(&fd, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
        if (ready < 0 && errno != EINTR) {
            ended_ = true;
            return std::nullopt;
        }
        if (ready <= 0)
            continue;
        char buffer[1 << 16];
        const ssize_t n = ::read(channel_, buffer, sizeof buffer);
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
    if (channel_ >= 0) // end of input: a server that still reads stops by itself
        shutdown(channel_, SHUT_WR);
    if (pid_ > 0) {
        ::kill(-pid_, SIGKILL);
        ::kill(pid_, SIGKILL);
        int status = 0;
        while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
        }
        pid_ = -1;
    }
    if (channel_ >= 0) {
        close(channel_);
        channel_ = -1;
    }
    ended_ = true;
}

} // namespace kwb
