"""Standby stage children of the warm worker: forked and prepared before their request comes.

Between two evaluations the user edits; the server uses that time. When the engine says an
evaluation is over (``{"standby": true}``), the server forks one child per stage it last ran
(inspect, verify, profile) from the requests it last saw. Each child creates its CUDA context and
makes the stage's preparation (preparation.py): task, reference outputs, input pools, profiler.
Then it says so on its done pipe (``PREPARED``) and waits. When the next request for that stage
matches (the same request but for the candidate), the server sends the child a go message and
the child runs the stage on its preparation; otherwise the child is killed and a fresh one
forked, as before. A standby child runs at most one candidate, so the isolation of one process
per stage holds.

The preparation is work on the device: another evaluation's timed calls must not run beside it.
The engine holds the device's lane shared while the children prepare, and the server tells it
when the last one said ``PREPARED`` (fork_server.py); until then the server reads ``PREPARED``
from the pipe and nothing further, which is the stage's once the child is started.

The go message carries a secret drawn when the child was forked: a candidate running in another
child of the same server cannot start a standby child on a request of its own making.
"""

import json
import os
import secrets
import signal
import time

from ..isolation import confinement, process_tree
from ..timing import timed_lane
from . import preparation, stage_child

# A standby child holds a CUDA context and the task's tensors; one that is not used for this
# long is let go.
IDLE_LIMIT_S = 600.0

# Written on the done pipe once the preparation is made (or failed): the child uses the device no
# more until its go message.
PREPARED = b"prepared\n"


class Standby:
    """The server's handle on one standby child."""

    def __init__(self, stage: str, data: dict, confine, close_in_child: list):
        self.stage = stage
        self.key = preparation.request_key(data)
        self.confine = confine
        self.secret = secrets.token_hex(16)
        self.forked_at = time.monotonic()
        read_end, write_end = os.pipe()
        done_read, done_write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(write_end)
            os.close(done_read)
            for fd in close_in_child:
                try:
                    os.close(fd)
                except OSError:
                    pass
            _child(stage, data, confine, read_end, done_write, self.secret)
        os.close(read_end)
        os.close(done_write)
        self.pid = pid
        self.go_fd = write_end
        self.done_fd = done_read
        self.prepared = False
        self._heard = b""  # the part of PREPARED read so far
        self._listening = True  # False once the pipe ended or said something else

    def fits(self, stage: str, data: dict, confine=None) -> bool:
        return (stage == self.stage and preparation.request_key(data) == self.key
                and confine == self.confine)

    def alive(self) -> bool:
        try:
            done, _ = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            return False
        return done == 0

    def said_prepared(self) -> bool:
        """Whether the child said ``PREPARED``, from what it wrote so far (without waiting). Reads
        no byte past that line: what a started child writes next is its stage's (fork_server's
        _wait reads it)."""
        import select

        while not self.prepared and self.listening():
            readable, _, _ = select.select([self.done_fd], [], [], 0)
            if not readable:
                break
            chunk = os.read(self.done_fd, len(PREPARED) - len(self._heard))
            if not chunk or not PREPARED.startswith(self._heard + chunk):
                self._listening = False  # the child is exiting, or wrote what no preparation does
                break
            self._heard += chunk
            self.prepared = self._heard == PREPARED
        return self.prepared

    def listening(self) -> bool:
        """Whether ``PREPARED`` may still come on the done pipe."""
        return self._listening and not self.prepared and self.done_fd >= 0

    def start(self, message: dict) -> bool:
        """Hands the child its request; False when it is gone (it then gets discarded)."""
        if not self.alive():
            return False
        # When the request was handed over (CLOCK_MONOTONIC, the same in every process): the child
        # reports how long the request waited for a preparation still under way.
        line = json.dumps(dict(message, secret=self.secret, sent_at=time.monotonic())) + "\n"
        try:
            os.write(self.go_fd, line.encode())
        except OSError:
            return False
        return True

    def take_done_fd(self) -> int:
        """The pipe on which the started child reports its result written (and asks for its GPU's
        lane alone); the caller closes it."""
        fd, self.done_fd = self.done_fd, -1
        return fd

    def take_go_fd(self) -> int:
        """The pipe that carried the go message: a started child reads its lane's grant on it
        (timing/timed_lane.py); the caller closes it."""
        fd, self.go_fd = self.go_fd, -1
        return fd

    def discard(self, kill_tree) -> None:
        for name in ("go_fd", "done_fd"):
            fd = getattr(self, name)
            if fd >= 0:
                os.close(fd)
                setattr(self, name, -1)
        kill_tree(self.pid)
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass


def _read_line(fd: int) -> bytes:
    data = b""
    while not data.endswith(b"\n"):
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        data += chunk
    return data


def _child(stage: str, data: dict, confine, go_fd: int, done_fd: int, secret: str) -> None:
    """Prepares, waits for the go message, runs the stage; never returns."""

    def body() -> int:
        stage_child.enter()
        # Until the go message names a log, output goes to the server's log (its stderr), and
        # stdin is nothing.
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        os.dup2(2, 1)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        # Before the task's code runs in the preparation (a refusal goes to the server's log).
        confinement.enter(confine)
        from . import runner

        prepared = runner.prepare(stage, data)
        prepared_at = time.monotonic()
        try:
            os.write(done_fd, PREPARED)
        except OSError:
            return 0  # the server let it go
        line = _read_line(go_fd)
        if not line:
            return 0  # the server let it go
        message = json.loads(line)
        if not secrets.compare_digest(str(message.pop("secret", "")), secret):
            os.write(2, b"kwb_harness standby: a go message without the server's secret; exiting\n")
            return 4
        sent_at = message.pop("sent_at", None)
        if prepared is not None and isinstance(sent_at, (int, float)):
            # Edits that come right after the last result find the preparation still going.
            prepared.request_waited = max(0.0, prepared_at - sent_at)
        stage_child.become_stage_process(message)
        # The go pipe stays open: the grant of the GPU's lane alone comes on it.
        timed_lane.connect(done_fd, go_fd)
        return stage_child.run_stage(message, prepared, done_fd)

    process_tree.exit_after("standby child", body)
