"""The GPU's lane alone, asked for when a stage reaches its timed calls.

Under the evaluation service a timing stage (profile, baseline) starts with its GPU's lane
shared, as the stages that run kernels untimed do: its process start, the task, the inputs and
torch.compile's compilation share the GPU with other evaluations' untimed work. Only the timed
calls need the GPU to themselves (another process's kernels would be timed with them), so the
stage asks for the lane alone before them and keeps it to its end. It asks before the
candidate's import: candidate code never waits for the lane beside another evaluation's timed
calls, where its threads could launch kernels into them. A stage forked by the warm worker asks on its done pipe (the line below) and waits for the
server's grant on a pipe of its own; the server passes both on to the engine, which owns the
lanes. A stage run as a process of its own was given the lane alone before it started:
``take()`` then returns at once.

The candidate's process is forked with every descriptor but its channel closed, so it can
neither ask nor answer for the judge.
"""

import os
import time

# Written on the done pipe (stages/stage_child.py writes its "result written" there too).
REQUEST = b"timed lane\n"
GRANTED = b"granted\n"

_ask_fd = -1
_grant_fd = -1
_held = False


def connect(ask_fd: int, grant_fd: int) -> None:
    """Where this stage process asks (its done pipe) and reads the grant: a warm worker's child."""
    global _ask_fd, _grant_fd, _held
    _ask_fd, _grant_fd, _held = ask_fd, grant_fd, False


def take() -> float:
    """Waits until this stage has its GPU's lane alone; returns the seconds waited. Once per
    stage: later calls return at once. The engine's stop ends the stage's process while it waits
    (the server kills the child); a server gone away ends it too."""
    global _held
    if _held or _ask_fd < 0:
        return 0.0
    started = time.perf_counter()
    os.write(_ask_fd, REQUEST)
    answer = b""
    while not answer.endswith(b"\n"):
        chunk = os.read(_grant_fd, 64)
        if not chunk:
            # The server closed the pipe without a grant: it is gone, and nothing here may time.
            os._exit(3)
        answer += chunk
    if answer != GRANTED:
        os._exit(3)
    os.close(_grant_fd)
    _held = True
    return time.perf_counter() - started
