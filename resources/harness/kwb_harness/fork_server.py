"""The warm evaluation worker: ``python -m kwb_harness.fork_server``.

A stage run as its own process pays for starting Python and importing torch (2-4 s) before it
does anything. This server pays that once: it imports torch and the harness, then forks one
child per stage request. Each child is exactly the process a cold stage would be (fresh CUDA
context, the candidate imported after the trusted state was captured, every guard in place);
it just starts from a warm interpreter. The server itself never initialises CUDA, because a
CUDA context does not survive fork, and never imports candidate code, so nothing a candidate
does can outlive its child.

The server also keeps the task's CPU-side inputs (``get_inputs()`` under each seed) in its own
memory (stages/warm_inputs.py). Children inherit them copy-on-write and only move them to the
device; generating large random inputs on the CPU was the biggest cost left in a warm stage.

Protocol, one JSON object per line, both ways over the socket the engine hands over as
descriptor 3 (``--channel-fd``); stdin is /dev/null and stdout goes to the server's log. Inside
the sandbox, bubblewrap's init (PID 1) keeps descriptors 0-2 open for anyone to reopen through
/proc/1/fd; it closes 3, and the server is not dumpable, so no stage's code can write a reply or
read a request. The server writes ``{"ready": true, ...}`` once. Each
request ``{"id", "stage", "request", "result", "log", "timeout_s",
"max_descendants", "confine"}`` gets one reply ``{"id", "status": "exited" | "signaled" | "timeout" |
"limit" | "cancelled", "code", "signal", "limit", "seconds", "warm_s", "standby"}``. A line
``{"cancel": id}`` while request ``id`` runs ends it: its child's tree is killed and the reply
says "cancelled" (the engine's stop token; the server keeps serving). Only the engine writes the
channel, so only the engine can cancel; a cancel for a request already answered is ignored. A line
``{"standby": true}`` says an evaluation is over: the server then forks standby children that
prepare the next inspect, verify and profile (stages/standby.py). Their preparation uses the
device, so the engine holds the device's lane shared for them: it sends ``{"standby": true, "id",
"timeout_s"}``, and the server replies ``{"id", "standby": [stages forked], "prepared": [stages
ready], "seconds"}`` once every standby child has made its preparation or exited. A child still
preparing after ``timeout_s``, or when ``{"cancel": id}`` comes, is killed: the lane is let go
after the reply, and nothing may use the device unseen then. Without an id there is no reply
and no wait (nothing to hold a lane for). A timing stage
that reaches its timed calls asks for its GPU's lane alone (timing/timed_lane.py): the server
writes ``{"id", "lane": "timed"}`` before the request's reply, the engine answers
``{"lane_granted": id}`` once it holds the lane, and the server passes the grant to the child;
the wait does not count against the stage's timeout. A stage counts as
finished when its child reports the result written; the child is then killed and reaped later.
End of input stops the server.

``confine`` (isolation/confinement.py) makes a child one workspace's stage: its working folder,
the variables naming that workspace's folders, and, where the engine shares this server between
workspaces, writes limited to that workspace's own folders. A standby child is confined as the
request it was forked from, and serves only a request confined the same way.
"""

import json
import os
import sys
import time

from .isolation import candidate_process, confinement, process_tree
from .stages import stage_child
from .stages.warm_inputs import warm_inputs
from .timing import timed_lane


_channel = -1  # the socket to the engine (main)


class _Channel:
    """The engine's lines on the channel. The main loop takes them in order; a stage's wait (or
    a standby's) looks among the lines already sent for a cancel of that request (the engine
    sends nothing else meanwhile, but a line it finds is kept for the main loop all the same)."""

    def __init__(self, fd: int):
        self.fd = fd
        self.pending = b""
        self.lines = []
        self.closed = False

    def _fill(self, timeout_s: float) -> None:
        import select

        ready, _, _ = select.select([self.fd], [], [], timeout_s)
        if not ready:
            return
        chunk = os.read(self.fd, 1 << 16)
        if not chunk:
            self.closed = True
            if self.pending.strip():
                self.lines.append(self.pending)
            self.pending = b""
            return
        self.pending += chunk
        while b"\n" in self.pending:
            line, self.pending = self.pending.split(b"\n", 1)
            self.lines.append(line)

    def next_line(self, timeout_s: float):
        """The next line; None when ``timeout_s`` passed without one; EOFError at the end."""
        if not self.lines and not self.closed:
            self._fill(timeout_s)
        if self.lines:
            return self.lines.pop(0).decode("utf-8", errors="replace")
        if self.closed:
            raise EOFError
        return None

    def cancel_arrived(self, request_id) -> bool:
        """Whether a cancel of request ``request_id`` came (without waiting)."""
        return self._take("cancel", request_id)

    def grant_arrived(self, request_id) -> bool:
        """Whether the engine granted request ``request_id`` its GPU's lane alone (without
        waiting)."""
        return self._take("lane_granted", request_id)

    def _take(self, key: str, request_id) -> bool:
        if request_id is None:
            return False
        if not self.closed:
            self._fill(0)
        for index, line in enumerate(self.lines):
            if _field_of(line, key) == request_id:
                del self.lines[index]
                return True
        return False


def _field_of(line: bytes, key: str):
    """The value of ``key`` in a line's JSON object, or None."""
    try:
        message = json.loads(line)
    except ValueError:
        return None
    return message.get(key) if isinstance(message, dict) else None


def _reply(message: dict) -> None:
    data = (json.dumps(message) + "\n").encode()
    while data:
        data = data[os.write(_channel, data):]


def _child(message: dict, close_fds: list, done_fd: int, grant_fd: int) -> None:
    """Runs in the forked child: becomes a normal stage process and never returns."""

    def body() -> int:
        for fd in close_fds + [_channel]:  # the channel and the standby pipes are the server's alone
            os.close(fd)
        timed_lane.connect(done_fd, grant_fd)
        # Dumpable again, as a cold stage process is (the server is not); a verify or profile
        # judge makes itself undumpable before it forks the candidate's process. A standby
        # child never turns dumpable: its candidate's process exists before its request does,
        # and its secret must stay out of reach.
        process_tree.set_dumpable(True)
        stage_child.enter()
        stage_child.become_stage_process(message)
        # After the log is open (a refusal is reported there), before any task or candidate code.
        confinement.enter(message.get("confine"))
        return stage_child.run_stage(message, done_fd=done_fd)

    process_tree.exit_after("fork child", body)


_descendants = process_tree.descendants
_kill_tree = process_tree.kill_tree


class _LaneRelay:
    """The server's part in a stage child's ask for its GPU's lane alone (timing/timed_lane.py):
    the ask goes to the engine, the engine's grant to the child. The time between them is the
    engine's queue, not the stage's work: it does not count against the stage's timeout."""

    def __init__(self, request_id, grant_fd: int, channel):
        self.request_id = request_id
        self.grant_fd = grant_fd
        self.channel = channel
        self.asked_at = None
        self.waited_s = 0.0

    def ask(self) -> None:
        if self.asked_at is None and self.grant_fd >= 0:
            self.asked_at = time.monotonic()
            _reply({"id": self.request_id, "lane": "timed"})

    def poll(self) -> None:
        """Passes a grant that came on to the child."""
        if self.asked_at is None or self.channel is None or not self.channel.grant_arrived(self.request_id):
            return
        self.waited_s += time.monotonic() - self.asked_at
        self.asked_at = None
        try:
            os.write(self.grant_fd, timed_lane.GRANTED)
        except OSError:
            pass  # the child is gone; its exit ends the wait
        self.grant_fd = -1  # one grant per stage

    def awaits_grant(self) -> bool:
        """Asked, not yet granted, and the engine's channel still open."""
        return self.asked_at is not None and self.channel is not None and not self.channel.closed

    def waiting_s(self, now: float) -> float:
        """The seconds spent waiting for the engine so far."""
        return self.waited_s + (now - self.asked_at if self.asked_at is not None else 0.0)


def _wait(pid: int, timeout_s: float, max_descendants: int = 0, done_fd: int = -1,
          cancelled=lambda: False, lane: _LaneRelay | None = None) -> tuple:
    """Waits for a stage child; returns (reply fields, whether the child is still dying). Like
    the engine's process runner it kills the child's whole tree on timeout or when it holds more
    than ``max_descendants`` processes (RLIMIT_NPROC does not hold for root, and a fork bomb must
    not take the machine).

    A child that reports its result written on ``done_fd`` is killed at once (nothing the
    candidate started survives the stage) and the stage counts as finished: the process's exit,
    which with a CUDA context takes ~0.1 s of driver clean-up, is not waited for here
    (_Server reaps it, and waits for it before a timing stage starts)."""
    import select

    started = time.monotonic()
    delay = 0.001
    next_census = started
    from_child = b""
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            if os.WIFSIGNALED(status):
                return {"status": "signaled", "signal": os.WTERMSIG(status)}, False
            return {"status": "exited", "code": os.WEXITSTATUS(status)}, False
        if cancelled():
            _kill_tree(pid)
            os.waitpid(pid, 0)
            return {"status": "cancelled"}, False
        now = time.monotonic()
        if lane is not None:
            lane.poll()
        if now - started - (lane.waiting_s(now) if lane is not None else 0.0) > timeout_s:
            _kill_tree(pid)
            os.waitpid(pid, 0)
            return {"status": "timeout"}, False
        if max_descendants and now >= next_census:
            next_census = now + 0.05
            if len(_descendants(pid)) + 1 > max_descendants:
                _kill_tree(pid)
                os.waitpid(pid, 0)
                return {"status": "limit", "limit": f"process limit ({max_descendants})"}, False
        if done_fd >= 0:
            # While the child waits for its lane, the engine's grant wakes this wait too.
            watched = [done_fd] + ([lane.channel.fd] if lane is not None and lane.awaits_grant() else [])
            readable, _, _ = select.select(watched, [], [], delay)
            if done_fd in readable:
                chunk = os.read(done_fd, 64)
                if not chunk:
                    done_fd = -1  # closed without the message: the child is exiting
                    continue
                from_child += chunk
                while b"\n" in from_child:
                    line, from_child = from_child.split(b"\n", 1)
                    if line + b"\n" == stage_child.RESULT_WRITTEN:
                        _kill_tree(pid)
                        return {"status": "exited", "code": 0}, True
                    if line + b"\n" == timed_lane.REQUEST and lane is not None:
                        lane.ask()
                if len(from_child) > 64:
                    done_fd = -1  # not a message of the stage's: read no more of it
        else:
            time.sleep(delay)
        delay = min(delay * 2, 0.01)


class _Server:
    """Serves stage requests; keeps the last request of each preparable stage and, between
    evaluations, a standby child per such stage (stages/standby.py)."""

    def __init__(self):
        self._last = {}
        self._standby = {}
        self._dying = []  # killed stage children whose exit is not reaped yet

    def _go_fds(self) -> list:
        """The server's ends of the standby children's pipes: no other child may hold them."""
        return [fd for s in self._standby.values() for fd in (s.go_fd, s.done_fd) if fd >= 0]

    def _reap(self, block: bool) -> None:
        for pid in list(self._dying):
            try:
                done, _ = os.waitpid(pid, 0 if block else os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done:
                self._dying.remove(pid)

    def serve(self, message: dict, channel: _Channel) -> dict:
        from .request import load_json
        from .stages.runner import preparable

        stage = message["stage"]
        reply = {"id": message.get("id")}
        warm_started = time.perf_counter()
        data = None
        try:
            data = load_json(message["request"])
            warm_inputs(data, stage)
        except Exception as exc:  # noqa: BLE001 - the child meets the same problem and reports it
            reply["warm_error"] = f"{type(exc).__name__}: {exc}"
        reply["warm_s"] = time.perf_counter() - warm_started
        import torch

        if torch.cuda.is_initialized():
            # Never expected; a forked child could not use CUDA any more, so stop serving.
            reply.update(status="exited", code=3, fatal="the fork server initialised CUDA")
            return reply
        # A timing stage starts on a GPU that no earlier stage child is still letting go of.
        self._reap(block=stage in ("profile", "baseline"))
        started = time.perf_counter()
        pid = None
        done_fd = grant_fd = -1
        standby = self._standby.pop(stage, None)
        if standby is not None:
            if (data is not None and standby.fits(stage, data, message.get("confine"))
                    and standby.start(message)):
                pid, done_fd, grant_fd = standby.pid, standby.take_done_fd(), standby.take_go_fd()
            else:
                standby.discard(_kill_tree)
        reply["standby"] = pid is not None
        if pid is None:
            close_fds = self._go_fds()
            done_fd, child_done_fd = os.pipe()
            child_grant_fd, grant_fd = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(done_fd)
                os.close(grant_fd)
                _child(message, close_fds, child_done_fd, child_grant_fd)
            os.close(child_done_fd)
            os.close(child_grant_fd)
        try:
            lane = _LaneRelay(message.get("id"), grant_fd, channel)
            outcome, dying = _wait(pid, float(message.get("timeout_s", 600)), int(message.get("max_descendants", 0)),
                                   done_fd, lambda: channel.cancel_arrived(message.get("id")), lane)
        finally:
            os.close(done_fd)
            os.close(grant_fd)
        if dying:
            self._dying.append(pid)
        reply.update(outcome)
        reply["seconds"] = time.perf_counter() - started
        if data is not None and preparable(stage):
            self._last[stage] = (data, message.get("confine"))
        return reply

    def stand_by(self, timeout_s: float | None = None, channel=None, request_id=None) -> dict:
        """Forks a standby child for each stage whose last request is known. With ``timeout_s``,
        returns only once every standby child (those forked before included) made its
        preparation or exited, at most ``timeout_s`` after the call or until the engine cancels
        ``request_id`` on ``channel``; a child still preparing then is killed."""
        from .stages.standby import Standby

        begun = time.monotonic()
        started = []
        for stage, (data, confine) in self._last.items():
            current = self._standby.get(stage)
            if current is not None and current.alive():
                continue
            if current is not None:
                current.discard(_kill_tree)
            if stage == "profile":
                # A profile that timed eager and torch.compile left them in the engine's baseline
                # cache: the next request asks for the candidate alone.
                data = dict(data, include_baselines=False)
            try:
                warm_inputs(data, stage)
            except Exception:  # noqa: BLE001 - the standby meets it too and runs from scratch
                pass
            self._standby[stage] = Standby(stage, data, confine, self._go_fds() + [_channel])
            started.append(stage)
        if timeout_s is None:
            return {"standby": started}
        self._await_preparations(begun + timeout_s, channel, request_id)
        prepared = [stage for stage, standby in self._standby.items() if standby.prepared and standby.alive()]
        return {"standby": started, "prepared": prepared, "seconds": time.monotonic() - begun}

    def _await_preparations(self, deadline: float, channel, request_id) -> None:
        """Waits until no standby child is still preparing; at ``deadline``, on a cancel of
        ``request_id`` or at the channel's end, kills those that are."""
        import select

        while True:
            preparing = [s for s in self._standby.values() if not s.said_prepared() and s.alive()]
            if not preparing:
                return
            now = time.monotonic()
            ended = channel is not None and (channel.closed or channel.cancel_arrived(request_id))
            if now >= deadline or ended:
                for standby in preparing:
                    standby.discard(_kill_tree)
                    del self._standby[standby.stage]
                return
            # Woken by a PREPARED line, a pipe's end (the child exiting) or the engine's cancel;
            # an exit that leaves the pipe open (a grandchild holds it) is seen on the next turn.
            watched = [s.done_fd for s in preparing if s.listening()]
            if channel is not None:
                watched.append(channel.fd)
            select.select(watched, [], [], min(0.05, deadline - now))

    def reap(self) -> None:
        self._reap(block=False)

    def expire(self) -> None:
        """Lets standby children go that waited too long: each holds a CUDA context."""
        from .stages.standby import IDLE_LIMIT_S

        now = time.monotonic()
        for stage, standby in list(self._standby.items()):
            if now - standby.forked_at > IDLE_LIMIT_S:
                standby.discard(_kill_tree)
                del self._standby[stage]

    def close(self) -> None:
        for standby in self._standby.values():
            standby.discard(_kill_tree)
        self._standby.clear()
        self._reap(block=True)


def _channel_from_arguments() -> int:
    args = sys.argv[1:]
    if len(args) != 2 or args[0] != "--channel-fd" or not args[1].isdigit():
        raise SystemExit("usage: python -m kwb_harness.fork_server --channel-fd N "
                         "(a socket the engine holds the other end of)")
    return int(args[1])


def main() -> int:
    global _channel
    started = time.perf_counter()
    _channel = _channel_from_arguments()
    # No process of the same user may open /proc/<server>/fd or /proc/<server>/mem: the stage
    # children it forks set this back (each is the process a cold stage would be).
    process_tree.set_dumpable(False)
    # torch.cuda.is_available() must not create driver state here; the NVML check does not.
    os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
    import torch  # noqa: F401 - the point of the server

    # Warms the stage modules.
    from . import models  # noqa: F401
    from .stages import inspect_task, profile, verify  # noqa: F401

    candidate_process.warm_before_fork()
    _reply({"ready": True, "pid": os.getpid(), "torch": torch.__version__,
            "import_s": time.perf_counter() - started})
    server = _Server()
    channel = _Channel(_channel)
    try:
        while True:
            try:
                line = channel.next_line(timeout_s=30.0)
            except EOFError:
                break
            if line is None:
                server.expire()
                server.reap()
                continue
            line = line.strip()
            if not line:
                continue
            try:
                message = json.loads(line)
                if not isinstance(message, dict):
                    raise ValueError("a request must be a JSON object")
                if "cancel" in message or "lane_granted" in message:
                    continue  # for a request already answered
                if message.get("standby") is True:
                    # The engine's evaluation is over; with an id, the engine holds the device's
                    # lane until the reply.
                    if message.get("id") is None:
                        server.stand_by()
                        continue
                    timeout_s = message.get("timeout_s", 600)
                    if not isinstance(timeout_s, (int, float)):
                        raise ValueError("timeout_s must be a number")
                    reply = server.stand_by(float(timeout_s), channel, message["id"])
                    _reply(dict(reply, id=message["id"]))
                    continue
                for key in ("stage", "request", "result", "log"):
                    if not isinstance(message.get(key), str):
                        raise ValueError(f"missing field '{key}'")
            except ValueError as exc:
                _reply({"id": None, "status": "bad_request", "error": str(exc)})
                continue
            reply = server.serve(message, channel)
            _reply(reply)
            if reply.get("fatal"):
                return 3
    finally:
        server.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
