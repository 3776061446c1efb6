"""What every stage child of the warm worker does, forked fresh or from standby (standby.py).

A child leaves the server's process group (a timeout kills its whole group) and dies with the
server; then it becomes the process a cold stage would be and runs the stage.
"""

import os
import signal
import sys

from ..isolation import process_tree


def become_stage_process(message: dict) -> None:
    """Turns a forked child into the process a cold stage would be: output into the stage's
    log, the stage's command line."""
    log = os.open(message["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    os.close(devnull)
    # The file size limit stays the evaluation's (the engine's, as for a cold stage). Lowering it
    # to a log size once capped every file the stage writes: torch.compile's precompiled header
    # (over 64 MiB) failed with "File size limit exceeded" and the CPU baseline was lost. The log
    # needs no limit of its own: the stage's output goes through the capture (runner.py, kept in
    # memory), the candidate's through its process's drain, and the engine reads the file's head
    # and tail only. Past the evaluation's limit a write fails with EFBIG instead of killing.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    sys.stdout = os.fdopen(1, "w", buffering=1)
    sys.stderr = os.fdopen(2, "w", buffering=1)
    # The command line a cold stage has (`python -m kwb_harness --request ...`, whose argv[0] is the
    # package's __main__.py, one folder up from here): nothing the candidate can read about its
    # process should tell a warm stage from a cold one.
    package_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.argv = [os.path.join(package_dir, "__main__.py"), "--request", message["request"],
                "--result", message["result"]]


# Written on the child's done pipe once the result file is complete (fork_server._wait).
RESULT_WRITTEN = b"result written\n"


def run_stage(message: dict, prepared=None, done_fd: int = -1) -> int:
    """Runs the stage, writes its result and says so on ``done_fd``; the exit code for the
    child."""
    from ..result import write_result
    from ..timing.phase_marks import finish_timeline
    from .runner import execute

    result = execute(message["stage"], message["request"], capture=True, prepared=prepared, forward=False,
                     consume_request=True)
    # Nothing the candidate left running may rewrite the result once it is written.
    process_tree.end_descendants()
    write_result(message["result"], result)
    # As in a cold stage: the injection library's last records, before os._exit.
    finish_timeline()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        pass
    if done_fd >= 0:
        # The server stops waiting here; the process's own exit (CUDA context clean-up) is not
        # part of the stage's time.
        try:
            os.write(done_fd, RESULT_WRITTEN)
        except OSError:
            pass
    return 0


def enter() -> None:
    os.setsid()  # its own process group: a timeout kills everything it started
    # Having left the server's group, it would outlive a killed server; the kernel ends it.
    process_tree.die_with_parent()
    # What the stage's code leaves behind (the compile stage loads the candidate's extension)
    # stays below the stage and is killed with it, not reparented to the server.
    process_tree.become_subreaper()
    if os.getppid() == 1:
        os._exit(3)
