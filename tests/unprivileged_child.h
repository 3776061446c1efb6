#pragma once

// Runs a check as a normal user: root passes every permission check, and what a candidate does
// with `chmod` to the folders it may write matters to the kwb of a normal user.
#include <filesystem>
#include <functional>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace kwb::test {

// Runs `check` in a forked child; under root the child first gives `owned` (and everything in
// it) to the user and group 65534 (nobody) and becomes that user. Returns the child's exit
// status (99 when it did not exit, 90 when it could not drop root). gtest's assertions do not
// reach the parent from the child: `check` returns a code saying what failed.
inline int runAsUnprivileged(const std::filesystem::path& owned,
                             const std::function<int()>& check) {
    const bool root = ::geteuid() == 0;
    if (root) {
        for (const auto& entry : std::filesystem::recursive_directory_iterator(owned))
            (void)!::lchown(entry.path().c_str(), 65534, 65534);
        (void)!::chown(owned.c_str(), 65534, 65534);
    }
    const pid_t pid = ::fork();
    if (pid == 0) {
        if (root && (::setgid(65534) != 0 || ::setuid(65534) != 0))
            ::_exit(90);
        ::_exit(check());
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 99;
}

} // namespace kwb::test
