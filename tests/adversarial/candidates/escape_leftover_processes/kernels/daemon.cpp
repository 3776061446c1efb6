// Runs when the extension is loaded: forks (raw system calls), the child starts a new session
// and forks again, and the grandchild, orphaned when its parent exits, names itself kwb-leftover
// and sleeps for two minutes.
#include <csignal>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace {

int leaveDaemon() {
    long child = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
    if (child != 0)
        return child > 0;
    syscall(SYS_setsid);
    if (syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0) != 0)
        syscall(SYS_exit, 0);
    prctl(PR_SET_NAME, "kwb-leftover", 0, 0, 0);
    for (int i = 0; i < 120; ++i)
        sleep(1);
    syscall(SYS_exit, 0);
    return 0;
}

const int daemonStarted = leaveDaemon();

} // namespace
