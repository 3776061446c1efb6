#include "engine/process/process_spawn.h"

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <linux/close_range.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace kwb {
namespace {

constexpr int kChannelDescriptor = 3;

// What the child reports through the exec pipe when it cannot become the program.
struct StartFailure {
    int step = 0; // 1: chdir, 2: exec
    int error = 0;
};

// In the child: the descriptor becomes `target`, and stays open across exec even when it
// already was `target` (dup2 onto itself keeps FD_CLOEXEC).
void placeDescriptor(int fd, int target) {
    if (fd == target)
        fcntl(fd, F_SETFD, 0);
    else
        dup2(fd, target);
}

// In the child: every descriptor from `first` up closes on exec. close_range needs Linux 5.11;
// older kernels get the loop up to the limit read before fork.
void closeInheritedDescriptors(int first, int openFilesLimit) {
    if (syscall(SYS_close_range, static_cast<unsigned>(first), ~0U, CLOSE_RANGE_CLOEXEC) == 0)
        return;
    for (int fd = first; fd < openFilesLimit; ++fd)
        fcntl(fd, F_SETFD, FD_CLOEXEC);
}

// In the child: a descriptor that must survive while descriptor 3 is being filled moves above
// it (close-on-exec, like the original).
int outOfTheWay(int fd) {
    return fd >= 0 && fd <= kChannelDescriptor ? fcntl(fd, F_DUPFD_CLOEXEC, kChannelDescriptor + 1)
                                               : fd;
}

[[noreturn]] void reportAndExit(int pipeFd, int step) {
    const StartFailure failure{step, errno};
    (void)!write(pipeFd, &failure, sizeof failure);
    _exit(127);
}

} // namespace

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

Spawned spawnProcess(const SpawnSpec& spec) {
    Spawned out;
    if (spec.argv.empty()) {
        out.error = "empty command line";
        return out;
    }
    const std::string executable = findExecutable(spec.argv[0]);
    if (executable.empty()) {
        out.error = "'" + spec.argv[0] + "' not found or not executable";
        return out;
    }
    std::array<int, 2> execPipe{-1, -1};
    if (pipe2(execPipe.data(), O_CLOEXEC) != 0) {
        out.error = std::string("pipe: ") + std::strerror(errno);
        return out;
    }
    const int devNull = open("/dev/null", O_RDWR | O_CLOEXEC);

    // Everything the child needs is built before fork: only async-signal-safe calls after it.
    std::vector<std::string> envStrings = spec.environment;
    std::vector<char*> envp;
    for (auto& s : envStrings)
        envp.push_back(s.data());
    envp.push_back(nullptr);
    std::vector<std::string> argvStrings = spec.argv;
    std::vector<char*> argv;
    for (auto& s : argvStrings)
        argv.push_back(s.data());
    argv.push_back(nullptr);
    rlimit files{};
    getrlimit(RLIMIT_NOFILE, &files);
    const int openFilesLimit = files.rlim_cur == RLIM_INFINITY
                                   ? 65536
                                   : static_cast<int>(std::min<rlim_t>(files.rlim_cur, 1 << 20));
    const int stdinFd = spec.stdinFd >= 0 ? spec.stdinFd : devNull;
    const int stdoutFd = spec.stdoutFd >= 0 ? spec.stdoutFd : devNull;
    const int stderrFd = spec.stderrFd >= 0 ? spec.stderrFd : devNull;

    const pid_t pid = fork();
    if (pid < 0) {
        out.error = std::string("fork: ") + std::strerror(errno);
        close(execPipe[0]);
        close(execPipe[1]);
        if (devNull >= 0)
            close(devNull);
        return out;
    }
    if (pid == 0) {
        setpgid(0, 0);
        if (spec.dieWithParent)
            prctl(PR_SET_PDEATHSIG, SIGKILL);
        // Dispositions and the mask survive exec; the child starts from the defaults.
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        for (int s : {SIGPIPE, SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGCHLD, SIGUSR1, SIGUSR2})
            signal(s, SIG_DFL);
        signal(SIGXFSZ, SIG_IGN); // past RLIMIT_FSIZE a write fails with EFBIG, visibly
        int reportFd = execPipe[1];
        int channelFd = spec.channelFd;
        if (channelFd >= 0) {
            reportFd = outOfTheWay(reportFd);
            channelFd = outOfTheWay(channelFd);
        }
        placeDescriptor(stdinFd, STDIN_FILENO);
        placeDescriptor(stdoutFd, STDOUT_FILENO);
        placeDescriptor(stderrFd, STDERR_FILENO);
        if (channelFd >= 0)
            placeDescriptor(channelFd, kChannelDescriptor);
        closeInheritedDescriptors(channelFd >= 0 ? kChannelDescriptor + 1 : 3, openFilesLimit);
        if (!spec.workingDirectory.empty() && chdir(spec.workingDirectory.c_str()) != 0)
            reportAndExit(reportFd, 1);
        applyLimits(spec.limits);
        if (spec.subreaper)
            prctl(PR_SET_CHILD_SUBREAPER, 1); // kept across execve
        execve(executable.c_str(), argv.data(), envp.data());
        reportAndExit(reportFd, 2);
    }
    setpgid(pid, pid); // also from the parent, so a kill right after fork reaches the group
    close(execPipe[1]);
    if (devNull >= 0)
        close(devNull);

    StartFailure failure;
    ssize_t n;
    do
        n = read(execPipe[0], &failure, sizeof failure);
    while (n < 0 && errno == EINTR);
    close(execPipe[0]);
    if (n == static_cast<ssize_t>(sizeof failure)) {
        waitpid(pid, nullptr, 0);
        out.error =
            failure.step == 1
                ? "cannot enter " + spec.workingDirectory + ": " + std::strerror(failure.error)
                : "cannot start " + executable + ": " + std::strerror(failure.error);
        return out;
    }
    out.pid = pid;
    return out;
}

} // namespace kwb
