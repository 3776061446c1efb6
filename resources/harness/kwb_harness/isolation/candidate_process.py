"""The judge's handle on the candidate's process.

The judge forks the candidate's process before it has computed anything the candidate could use
(reference outputs, the checks it will make) and before it creates a CUDA context, which a fork
would not carry over. The child closes every descriptor but its end of the channel and an
output pipe (the judge's log and result stay out of its reach), dies with the judge, and serves
requests (candidate_host.py). The judge itself becomes non-dumpable and a child subreaper, so
the candidate can neither read nor trace it, and nothing the candidate starts escapes
:meth:`CandidateProcess.stop`.
"""

import os
import signal
import socket
import sys
import threading

from ..errors import CANDIDATE_RUN, CRASHED, INTERNAL, OUTPUT_MISMATCH, HarnessError
from ..integrity.kernel_records import KernelRecords
from . import process_tree
from .channel import Channel, ChannelClosed, ProtocolError

# Head and tail of the candidate's own output kept for the stage's log.
_OUTPUT_HEAD = 16 * 1024
_OUTPUT_TAIL = 48 * 1024
# How long the judge keeps stopping the candidate's processes before it times without them all
# stopped (and says so): a loaded two-core machine can take milliseconds to deliver a stop.
_PAUSE_PATIENCE_S = 2.0


class _OutputDrain:
    """Reads the candidate's stdout/stderr pipe on a thread, keeping its head and tail."""

    def __init__(self, fd: int):
        self._fd = fd
        self._head = bytearray()
        self._tail = bytearray()
        self._dropped = 0
        self._thread = threading.Thread(target=self._pump, name="kwb-candidate-output", daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        while True:
            try:
                chunk = os.read(self._fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            room = _OUTPUT_HEAD - len(self._head)
            if room > 0:
                self._head += chunk[:room]
                chunk = chunk[room:]
            self._tail += chunk
            if len(self._tail) > _OUTPUT_TAIL:
                cut = len(self._tail) - _OUTPUT_TAIL
                self._dropped += cut
                del self._tail[:cut]
        try:
            os.close(self._fd)
        except OSError:
            pass

    def text(self, wait_s: float = 1.0) -> str:
        self._thread.join(wait_s)
        middle = f"\n[... {self._dropped} bytes of the candidate's output cut ...]\n" if self._dropped else ""
        return (bytes(self._head) + middle.encode() + bytes(self._tail)).decode("utf-8", errors="replace")


def _run_child(host_sock: socket.socket, output_fd: int, records) -> None:
    """Runs in the forked child and never returns."""
    process_tree.exit_after("candidate process", lambda: _child_body(host_sock, output_fd, records))


def _child_body(host_sock: socket.socket, output_fd: int, records) -> int:
    keep = {host_sock.fileno()}
    if records is not None:
        # The CUDA driver loads the injection library when this process initialises CUDA (the
        # "prepare" request, before the candidate's import); it reads the key, closes that
        # pipe and forgets these variables.
        keep.update(records.child_descriptors())
        os.environ.update(records.child_environment())
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(output_fd, 1)
    os.dup2(output_fd, 2)
    # Everything else the judge held (its log, its result, the warm worker's pipes) is not
    # the candidate's business.
    for fd in _open_fds():
        if fd > 2 and fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass
    process_tree.die_with_parent()
    if os.getppid() == 1:
        return 3
    # Orphans of what the candidate starts stay below this process, where stop() finds them.
    # A candidate can undo it; the judge then finds them among its own children instead.
    process_tree.become_subreaper()
    # A session of its own: whatever the candidate starts is in it or in a newer one, never in
    # the judge's, so the judge tells the candidate's escaped processes from its own children
    # (torch.compile's workers, a compiler) by session (CandidateProcess._orphans).
    try:
        os.setsid()
    except OSError:
        pass
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    # sys.stdout and sys.stderr stay the objects they are: they write to descriptors 1 and 2,
    # which now lead to the pipe. (Replacing them would let the old objects close 1 and 2 when
    # collected.)
    # Nothing about the judge's stage in the candidate's own view of its command line.
    sys.argv = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "__main__.py")]
    from .candidate_host import serve

    return serve(Channel(host_sock))


def _open_fds() -> list:
    try:
        return [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        return list(range(3, 1024))


_warmed = False


def warm_before_fork() -> None:
    """Pays, once and before any fork, what torch otherwise loads on first use in each process:
    torch itself, the operator guard's first dispatch (it imports torch._dynamo: 1-4 s) and the
    profiler the census uses. The candidate's process inherits all of it instead of importing it
    again while the judge waits. Then freezes the heap: later gc.collect() calls (once per check)
    no longer walk torch's hundreds of thousands of long-lived objects, and the pages stay shared
    copy-on-write. None of this touches CUDA, which a fork would not carry over."""
    global _warmed
    if _warmed:
        return
    import gc

    # torch.cuda.is_available() must not initialise the driver before a fork; the NVML check does not.
    os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
    import torch  # noqa: F401
    import torch.profiler  # noqa: F401

    from ..integrity import op_guard

    op_guard.warm_up()
    gc.collect()
    gc.freeze()
    _warmed = True


def refuse_forking_after_cuda() -> None:
    """A process forked after CUDA was initialised cannot use the GPU ("Cannot re-initialize CUDA
    in forked subprocess"), so an honest candidate would fail as if its own code had. That is how
    the stage was started (a script that ran another stage in the same process first), never the
    candidate's doing: the evaluator's failure, which scores nothing."""
    torch = sys.modules.get("torch")
    # A judge itself forked from a process that had initialised CUDA reports it uninitialised,
    # yet neither it nor its children can use the GPU: torch calls that a bad fork.
    bad_fork = getattr(torch.cuda, "_is_in_bad_fork", lambda: False) if torch is not None else None
    if torch is not None and (torch.cuda.is_initialized() or bad_fork()):
        raise HarnessError(INTERNAL, "CUDA was initialised in the judge's process before the candidate's "
                                     "process was forked, so the candidate could not use the GPU; run each "
                                     "stage in a process of its own (`python -m kwb_harness`)")


class CandidateProcess:
    def __init__(self, payload_limit: int = 1 << 36, records_library: str = ""):
        """``records_library``: the injection library whose sealed kernel records the judge
        reads (GPU); none, and the census comes from the candidate's own process."""
        warm_before_fork()
        refuse_forking_after_cuda()
        process_tree.become_judge()
        self.records = KernelRecords(records_library) if records_library else None
        judge_sock, host_sock = socket.socketpair()
        read_fd, write_fd = os.pipe()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        pid = os.fork()
        if pid == 0:
            judge_sock.close()
            os.close(read_fd)
            _run_child(host_sock, write_fd, self.records)
        host_sock.close()
        os.close(write_fd)
        if self.records is not None:
            self.records.start_reading()
        self.pid = pid
        self._channel = Channel(judge_sock, payload_limit)
        self._output = _OutputDrain(read_fd)
        self._status = None
        self._paused = False
        # Processes of the candidate's besides its own (pid: name), found when it was paused.
        self.started_processes = {}
        self.pause_incomplete = ""
        self._on_gpu = None  # whether GPU outputs stay on the GPU: probed at the first fetch
        # The operator guard the judge asked this process to keep (start_for); its report must
        # say it kept it (reports.guard_flag). None: not asked, nothing to check.
        self.guard_requested = None
        # The judge's children before the candidate was imported (torch.compile's workers, ...).
        # Any later child of the judge other than this process is an orphan of the candidate's
        # (the judge is the subreaper): it is paused, and ended, with the candidate.
        self._judge_children_before_import = None

    # -- requests --------------------------------------------------------------------------

    def post(self, message: dict) -> None:
        """Sends a request whose reply :meth:`collect` reads later (the candidate's process then
        works while the judge does too)."""
        if message.get("op") == "load" and self._judge_children_before_import is None:
            self._judge_children_before_import = set(process_tree.children(os.getpid()))
        try:
            self._channel.send(message)
        except ChannelClosed:
            raise self._death() from None

    def ask(self, message: dict, device: str | None = None) -> tuple:
        """Sends a request; (reply, payload). A reply with an error becomes a HarnessError of
        the kind the candidate's side named (it can only fail itself); a dead process or a
        malformed reply becomes one too."""
        self.post(message)
        return self.collect(device)

    def fetch(self, indices: list, device: str | None) -> dict:
        """The payload of a fetch of the kept outputs ``indices``, on ``device``. GPU outputs
        stay on the GPU where the channel's probe showed that path brings values whole."""
        on_gpu = self._gpu_path(device)
        self.post({"op": "fetch", "indices": indices, "on_gpu": on_gpu})
        return self.collect(device, on_gpu)[1]

    def _gpu_path(self, device: str | None) -> bool:
        if self._on_gpu is None:
            self._on_gpu = bool(device) and device.startswith("cuda") and self._probe_gpu_path(device)
        return self._on_gpu

    def _probe_gpu_path(self, device: str) -> bool:
        """Whether a pattern of the judge's seed comes through the GPU path (cuda_ipc.py) whole.
        Where it does not (a host or sandbox without CUDA IPC, memory the driver cannot share),
        outputs cross through host memory as before; an error here is never the candidate's."""
        import secrets

        import torch

        from . import cuda_ipc

        seed = secrets.randbits(31)
        self.post({"op": "gpu_probe", "seed": seed, "on_gpu": True})
        try:
            _, payload = self.collect(device, on_gpu=True)
        except HarnessError as exc:
            if not self.alive():
                raise
            why = exc.message
        else:
            probe = payload.get("probe") if isinstance(payload, dict) else None
            expected = cuda_ipc.probe_value(seed).to(device)
            if self._channel.last_value_path == "gpu" and isinstance(probe, torch.Tensor) \
                    and probe.dtype == expected.dtype and probe.shape == expected.shape and torch.equal(probe, expected):
                print("outputs reach the judge on the GPU (CUDA IPC)", flush=True)
                return True
            why = f"the probe came by {self._channel.last_value_path or 'no value'}" \
                if self._channel.last_value_path != "gpu" else "the probe came changed"
        print(f"outputs reach the judge through host memory: {why}", flush=True)
        return False

    def collect(self, device: str | None = None, on_gpu: bool = False) -> tuple:
        try:
            reply, payload = self._channel.receive(device, on_gpu)
        except ChannelClosed:
            raise self._death() from None
        except ProtocolError as exc:
            raise HarnessError(OUTPUT_MISMATCH, f"the candidate's process sent a malformed reply: {exc}") from None
        if reply.get("ok") is not True:
            error = reply.get("error") if isinstance(reply.get("error"), dict) else {}
            kind = error.get("kind") if isinstance(error.get("kind"), str) else CANDIDATE_RUN
            text = error.get("message") if isinstance(error.get("message"), str) else "no message"
            raise HarnessError(kind, text[:8000])
        return reply, payload

    def _death(self) -> HarnessError:
        """The error for a candidate's process that is gone: ``crashed`` when a signal ended it."""
        status = self._wait(timeout_s=2.0)
        if status is None:
            return HarnessError(CANDIDATE_RUN, "the candidate's process stopped answering")
        if os.WIFSIGNALED(status):
            number = os.WTERMSIG(status)
            try:
                name = signal.Signals(number).name
            except ValueError:
                name = f"signal {number}"
            return HarnessError(CRASHED, f"the candidate's process was killed by {name} "
                                         "(a crash in ModelNew or its kernels?)")
        return HarnessError(CANDIDATE_RUN, f"the candidate's process exited with status {os.WEXITSTATUS(status)} "
                                           "(sys.exit / os._exit in ModelNew?)")

    def _wait(self, timeout_s: float):
        import time

        if self._status is not None:
            return self._status
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                done, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                return None
            if done:
                self._status = status
                return status
            if time.monotonic() > deadline:
                return None
            time.sleep(0.01)

    # -- control ---------------------------------------------------------------------------

    def _orphans(self) -> list:
        """Children of the judge the candidate left behind (reparented to the judge, or made its
        children with clone(CLONE_PARENT)): new since the import and outside the judge's session,
        which no process of the candidate's can join; the judge's own later children (a
        compiler torch.compile starts for a baseline) are in it."""
        if self._judge_children_before_import is None:
            return []
        session = process_tree.session(os.getpid())
        # A child that ended between the list and the look has no session to read (-1): gone,
        # not the candidate's.
        return [pid for pid in process_tree.children(os.getpid())
                if pid != self.pid and pid not in self._judge_children_before_import
                and process_tree.session(pid) not in (session, -1)]

    def _candidate_roots(self) -> list:
        return [self.pid] + self._orphans()

    def pause(self) -> None:
        """Stops the candidate and everything it started (while the judge times the baselines:
        nothing of the candidate's may compete with them)."""
        if self._status is None and not self._paused:
            self._paused = True
            self._stop_all()

    def _stop_all(self) -> None:
        """Stops every process of the candidate's until none runs (process_tree.stop_until_still:
        a single list signalled in order let a helper that watched for the stop start burners
        that ran beside the baselines, an outside round, 2026-12-05). Every process seen besides
        the candidate's own is kept for the ``processes_started`` finding."""
        seen, running = process_tree.stop_until_still(self._candidate_tree, _PAUSE_PATIENCE_S)
        self._note_started(seen)
        if running:
            self.pause_incomplete = (f"{len(running)} of the candidate's processes still ran "
                                     f"{_PAUSE_PATIENCE_S:g} s after the judge stopped them")

    def _candidate_tree(self) -> list:
        tree = []
        for root in self._candidate_roots():
            tree += [root] + process_tree.descendants(root)
        return tree

    def _note_started(self, tree: list) -> None:
        for pid in tree:
            # A zombie (a grandchild whose parent went first, adopted by the candidate's process,
            # a subreaper, and not yet reaped) runs nothing any more; a process gone is no finding.
            if pid == self.pid or pid in self.started_processes or process_tree.state(pid) in ("", "Z", "X"):
                continue
            self.started_processes[pid] = process_tree.command_name(pid)

    def processes_flag(self) -> dict | None:
        """The strict finding when the candidate's process started other processes (alive while
        the judge timed the baselines, or now, after the timed calls) or could not be stopped;
        None otherwise."""
        if self._status is None:
            self._note_started(self._candidate_tree())
        if not self.started_processes and not self.pause_incomplete:
            return None
        names = sorted(set(self.started_processes.values()))
        reason = (f"the candidate's process started {len(self.started_processes)} other process(es) "
                  f"({', '.join(names[:5])}{', ...' if len(names) > 5 else ''}) that lived while the judge "
                  "timed: work there can compete with the baselines or finish off the clock")
        if self.pause_incomplete:
            reason += "; " + self.pause_incomplete
        return {"code": "processes_started", "severity": "strict", "reason": reason}

    def resume(self) -> None:
        if self._paused:
            for root in self._candidate_roots():
                process_tree.signal_tree(root, signal.SIGCONT)
            self._paused = False

    def stop(self) -> str:
        """Ends the candidate's process and everything it started, also what escaped below
        the judge; returns its output. Called before the judge writes its result, so nothing
        of the candidate's is left to rewrite it."""
        orphans = self._orphans()
        victims = process_tree.descendants(self.pid) + orphans
        for root in orphans:
            victims += process_tree.descendants(root)
            process_tree.kill_tree(root)
        process_tree.kill_tree(self.pid)
        self._wait(timeout_s=5.0)
        for pid in victims:
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass
        self._channel.close()
        return self._output.text()

    def alive(self) -> bool:
        return self._status is None and self._wait(0) is None


def start_for(req, guard: bool) -> CandidateProcess:
    """The candidate's process for a stage's request, asked to prepare its side. On the GPU with
    the injection library, its kernels reach the judge as sealed records, in every stage alike."""
    from .candidate_host import host_fields

    library = req.kernel_records_library if req.device == "cuda" else ""
    process = CandidateProcess(records_library=library)
    process.guard_requested = guard
    process.post({"op": "prepare", "fields": host_fields(req), "guard": guard, "kernel_records": bool(library)})
    return process
