#include "engine/process_runner.h"

#include <array>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <poll.h>
#include <sstream>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace kwb {
namespace {

class OutputCollector {
public:
    explicit OutputCollector(std::size_t limit)
        : headLimit_(limit / 2), tailLimit_(limit - limit / 2) {}

    void append(const char* data, std::size_t size) {
        total_ += size;
        std::size_t toHead = std::min(size, headLimit_ - std::min(headLimit_, head_.size()));
        head_.append(data, toHead);
        if (toHead == size)
            return;
        tail_.append(data + toHead, size - toHead);
        // Trimming lazily keeps appends amortized O(n) on floods of tiny writes.
        if (tail_.size() > 2 * tailLimit_ + 4096)
            tail_.erase(0, tail_.size() - tailLimit_);
    }

    CapturedOutput finish() {
        CapturedOutput result;
        result.totalBytes = total_;
        if (tail_.size() > tailLimit_) {
            tail_.erase(0, tail_.size() - tailLimit_);
        }
        result.truncated = head_.size() + tail_.size() < total_;
        result.text = head_;
        if (result.truncated) {
            result.text += "\n[... " + std::to_string(total_ - head_.size() - tail_.size()) +
                           " bytes of output omitted ...]\n";
        }
        result.text += tail_;
        return result;
    }

private:
    std::size_t headLimit_;
    std::size_t tailLimit_;
    std::size_t total_ = 0;
    std::string head_;
    std::string tail_;
};

void setNonBlocking(int fd) {
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

} // namespace

std::vector<std::string> mergedEnvironment(const std::map<std::string, std::string>& overrides) {
    std::map<std::string, std::string> merged;
    for (char** entry = environ; entry && *entry; ++entry) {
        std::string kv = *entry;
        auto eq = kv.find('=');
        if (eq != std::string::npos)
            merged[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    for (const auto& [key, value] : overrides)
        merged[key] = value;
    std::vector<std::string> result;
    result.reserve(merged.size());
    for (const auto& [key, value] : merged)
        result.push_back(key + "=" + value);
    return result;
}

// Runs in the forked child: only async-signal-safe calls.
void applyLimits(const ResourceLimits& limits) {
    auto set = [](int resource, std::uint64_t value) {
        if (value == 0)
            return;
        rlimit limit{static_cast<rlim_t>(value), static_cast<rlim_t>(value)};
        setrlimit(resource, &limit);
    };
    set(RLIMIT_CPU, limits.cpuSeconds);
    set(RLIMIT_AS, limits.addressSpaceBytes);
    set(RLIMIT_NPROC, limits.maxProcesses);
    set(RLIMIT_NOFILE, limits.openFiles);
    set(RLIMIT_FSIZE, limits.fileSizeBytes);
}

std::vector<int> descendantPids(int root) {
    std::map<int, std::vector<int>> children;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
        const std::string name = entry.path().filename().string();
        if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0])))
            continue;
        std::ifstream stat(entry.path() / "stat");
        std::string line;
        if (!std::getline(stat, line))
            continue;
        // The command name may hold spaces and parentheses; fields resume after the last ')'.
        const auto close = line.rfind(')');
        if (close == std::string::npos)
            continue;
        std::istringstream rest(line.substr(close + 1));
        char state = 0;
        int ppid = 0;
        rest >> state >> ppid;
        if (state != 'Z')
            children[ppid].push_back(std::stoi(name));
    }
    std::vector<int> result;
    std::vector<int> frontier{root};
    while (!frontier.empty()) {
        int pid = frontier.back();
        frontier.pop_back();
        for (int child : children[pid]) {
            result.push_back(child);
            frontier.push_back(child);
        }
    }
    return result;
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

std::string findExecutable(const std::string& name) {
    if (name.find('/') != std::string::npos)
        return access(name.c_str(), X_OK) == 0 ? name : std::string();
    const char* path = std::getenv("PATH");
    std::string paths = path ? path : "/usr/local/bin:/usr/bin:/bin";
    std::size_t start = 0;
    while (start <= paths.size()) {
        std::size_t end = paths.find(':', start);
        if (end == std::string::npos)
            end = paths.size();
        std::string dir = paths.substr(start, end - start);
        if (!dir.empty()) {
            std::string candidate = dir + "/" + name;
            if (access(candidate.c_str(), X_OK) == 0 && !std::filesystem::is_directory(candidate))
                return candidate;
        }
        start = end + 1;
    }
    return {};
}

ProcessResult runProcess(const ProcessSpec& spec) {
    ProcessResult result;
    const auto startTime = std::chrono::steady_clock::now();
    if (spec.argv.empty()) {
        result.startError = "empty command line";
        return result;
    }
    const std::string executable = findExecutable(spec.argv[0]);
    if (executable.empty()) {
        result.startError = "'" + spec.argv[0] + "' not found or not executable";
        return result;
    }

    std::array<int, 2> outPipe{}, errPipe{}, inPipe{}, execPipe{};
    if (pipe2(outPipe.data(), O_CLOEXEC) || pipe2(errPipe.data(), O_CLOEXEC) ||
        pipe2(inPipe.data(), O_CLOEXEC) || pipe2(execPipe.data(), O_CLOEXEC)) {
        result.startError = std::string("pipe: ") + std::strerror(errno);
        return result;
    }

    // Everything the child needs is built before fork: only async-signal-safe calls after it.
    std::vector<std::string> envStrings = mergedEnvironment(spec.environmentOverrides);
    std::vector<char*> envp;
    for (auto& s : envStrings)
        envp.push_back(s.data());
    envp.push_back(nullptr);
    std::vector<std::string> argvStrings = spec.argv;
    std::vector<char*> argv;
    for (auto& s : argvStrings)
        argv.push_back(s.data());
    argv.push_back(nullptr);

    const pid_t pid = fork();
    if (pid < 0) {
        result.startError = std::string("fork: ") + std::strerror(errno);
        for (int fd : {outPipe[0], outPipe[1], errPipe[0], errPipe[1], inPipe[0], inPipe[1],
                       execPipe[0], execPipe[1]})
            close(fd);
        return result;
    }
    if (pid == 0) {
        setpgid(0, 0);
        applyLimits(spec.limits);
        // A child that writes past RLIMIT_FSIZE should see EFBIG, not die of SIGXFSZ silently.
        signal(SIGXFSZ, SIG_IGN);
        dup2(inPipe[0], STDIN_FILENO);
        dup2(outPipe[1], STDOUT_FILENO);
        dup2(errPipe[1], STDERR_FILENO);
        if (!spec.workingDirectory.empty() && chdir(spec.workingDirectory.c_str()) != 0) {
            int code = errno;
            (void)!write(execPipe[1], &code, sizeof code);
            _exit(127);
        }
        execve(executable.c_str(), argv.data(), envp.data());
        int code = errno;
        (void)!write(execPipe[1], &code, sizeof code);
        _exit(127);
    }
    setpgid(pid, pid); // also from the parent, so a kill right after fork reaches the group

    close(outPipe[1]);
    close(errPipe[1]);
    close(inPipe[0]);
    close(execPipe[1]);

    int execErrno = 0;
    if (read(execPipe[0], &execErrno, sizeof execErrno) == sizeof execErrno) {
        close(execPipe[0]);
        close(outPipe[0]);
        close(errPipe[0]);
        close(inPipe[1]);
        waitpid(pid, nullptr, 0);
        result.startError =
            (spec.workingDirectory.empty() ? "exec " + executable + ": "
                                           : "exec in " + spec.workingDirectory + ": ") +
            std::strerror(execErrno);
        return result;
    }
    close(execPipe[0]);
    result.started = true;

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

    OutputCollector outCollector(spec.outputLimitBytes), errCollector(spec.outputLimitBytes);
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
        if (spec.maxDescendants > 0 && !childExited) {
            std::vector<int> tree = descendantPids(pid);
            if (tree.size() + 1 > spec.maxDescendants) {
                result.limitExceeded =
                    "process limit (" + std::to_string(spec.maxDescendants) + ")";
                kill(-pid, SIGKILL);
                for (int p : tree)
                    kill(p, SIGKILL); // those that escaped the group with setsid
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
        int waitMs = spec.maxDescendants > 0 || spec.stop.stop_possible() ? 20 : 200;
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
                    .append(buffer.data(), static_cast<std::size_t>(n));
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
    // The group is killed even on a normal finish: a candidate may leave background children.
    kill(-pid, SIGKILL);
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
    result.out = outCollector.finish();
    result.err = errCollector.finish();
    result.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - startTime);
    return result;
}

} // namespace kwb
