// Runs when the extension is loaded: a shell, started through raw system calls, starts 700
// sleepers and then marks that it got that far; the loader waits up to 5 s for the mark.
#include <csignal>
#include <cstdio>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace {

int storm() {
    // The mark names this process: one left in a shared /tmp by an earlier run is not this one.
    char mark[64];
    std::snprintf(mark, sizeof mark, "/tmp/kwb-escape-storm-%ld", syscall(SYS_getpid));
    char script[256];
    std::snprintf(script, sizeof script,
                  "i=0; while [ $i -lt 700 ]; do sleep 30 & i=$((i+1)); done; sleep 2; : > %s; "
                  "wait",
                  mark);
    long child = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
    if (child == 0) {
        const char* argv[] = {"/bin/sh", "-c", script, nullptr};
        const char* envp[] = {"PATH=/usr/bin:/bin", nullptr};
        syscall(SYS_execve, argv[0], argv, envp);
        syscall(SYS_exit, 0);
    }
    struct stat seen {};
    for (int i = 0; i < 100 && stat(mark, &seen) != 0; ++i)
        usleep(50000);
    return 1;
}

const int stormed = storm();

} // namespace
