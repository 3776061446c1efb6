"""The candidate's kernels as the judge sees them: sealed records from the injection library.

On the GPU the kernel census decides whether a candidate's time is its own kernels' or torch's.
Taken by torch's profiler inside the candidate's process, the census was a reply the candidate
could rewrite. Here the CUPTI injection library (engine/cupti), loaded into the candidate's
process by the CUDA driver when that process initialises CUDA, before any candidate code is
imported, writes every kernel, copy and set record to a pipe only the judge reads. Each line is
sealed with a key the library read from a second pipe and closed, and numbered
(engine/cupti/sealed_line.h): a line the candidate adds, changes, drops or replays shows. Each
"flushed" line pairs CLOCK_MONOTONIC, the judge's own clock, with CUPTI's clock read at the same
moment, so the judge places the records in its own windows around each batch of calls; nothing
the candidate's process says about when it ran what is needed.

What the candidate can still do is stop the records (disable CUPTI, take its callbacks over,
close or redirect the pipe): the judge then waits in vain for the library's "flushed" line past
its last window, and that is a strict finding. What it could do beyond that is read the key out
of the library's memory; that is native memory forensics, not a rebound Python name, and is
listed as a known limit in docs/ARCHITECTURE.md.
"""

import hashlib
import hmac
import json
import os
import threading
import time

SEAL_BYTES = 32
_MAX_LINE = 1 << 20
# Stands in the byte stream for a line cut for its length (no line of the library's starts so).
_OVERLONG = b"\x00overlong"
# How long the judge waits for the library to deliver the records of its last window. The
# library flushes when the candidate's process is asked to; a loaded two-core machine has stalled a
# thread for seconds.
FLUSH_PATIENCE_S = 10.0
# How long the judge waits, before the candidate is imported, for the library's first line.
HEADER_PATIENCE_S = 20.0


class Kernel:
    __slots__ = ("name", "stream", "start", "end", "transfer")

    def __init__(self, name: str, stream: int, start: int, end: int, transfer: bool):
        self.name = name
        self.stream = stream
        self.start = start
        self.end = end
        self.transfer = transfer

    @property
    def duration_ns(self) -> int:
        return max(0, self.end - self.start)


def seal(key: bytes, sequence: int, record: str) -> str:
    """The sealed line for ``record`` (tests build forged and honest lines with it)."""
    mac = hmac.new(key, f"{sequence} {record}".encode(), hashlib.sha256).hexdigest()
    return f"{sequence} {mac} {record}\n"


class KernelRecords:
    """The judge's end of one candidate process's sealed records. Made before the fork; the
    child calls :meth:`child_environment` and keeps :meth:`child_descriptors`, the judge calls
    :meth:`start_reading` after it."""

    def __init__(self, library: str):
        self.library = library
        self._key = os.urandom(SEAL_BYTES)
        self._read_fd, self._write_fd = os.pipe()
        self._seal_read, seal_write = os.pipe()
        os.write(seal_write, self._key)
        os.close(seal_write)
        self._changed = threading.Condition()
        self._thread = None
        self._pending = bytearray()
        self._skipping = False
        self._next_sequence = 0
        self.kernels = []
        self.flushed_at = 0
        # The latest flush at which the records of every launch counted so far had arrived, and
        # how many were missing at the latest flush.
        self.complete_at = 0
        self.missing = 0
        self.kernel_records = 0
        # CLOCK_MONOTONIC minus CUPTI's clock, read together at each flush: the records'
        # timestamps are CUPTI's.
        self._clock_offsets = []
        self.dropped = 0
        self.header = False
        self.errors = []
        # Why the records cannot be trusted (a line that is not the library's): a strict finding.
        self.tampered = None
        self.ended = False

    # -- the fork ---------------------------------------------------------------------------

    def child_descriptors(self) -> tuple:
        return (self._write_fd, self._seal_read)

    def child_environment(self) -> dict:
        return {"CUDA_INJECTION64_PATH": self.library, "KWB_KERNEL_RECORDS": "sealed",
                "KWB_RECORDS_FD": str(self._write_fd), "KWB_RECORDS_SEAL_FD": str(self._seal_read)}

    def start_reading(self) -> None:
        os.close(self._write_fd)
        os.close(self._seal_read)
        self._thread = threading.Thread(target=self._pump, name="kwb-kernel-records", daemon=True)
        self._thread.start()

    # -- reading ----------------------------------------------------------------------------

    def _pump(self) -> None:
        """Only moves bytes: checking seals and parsing JSON holds the GIL, and done here, while
        the judge times a batch, it delayed the judge's own thread by milliseconds per batch
        (the judge's clock then saw time the candidate had not spent). The lines are checked by
        whoever reads the records, between batches (:meth:`_catch_up`)."""
        while True:
            try:
                chunk = os.read(self._read_fd, 1 << 16)
            except OSError:
                break
            if not chunk:
                break
            with self._changed:
                if self._skipping:
                    # The rest of a line already cut for its length.
                    end = chunk.find(b"\n")
                    if end < 0:
                        continue
                    chunk = chunk[end + 1:]
                    self._skipping = False
                self._pending += chunk
                tail = self._pending.rfind(b"\n") + 1
                if len(self._pending) - tail > _MAX_LINE:
                    # Whole lines before it stay; the endless one becomes a mark in its place, so
                    # that it is rejected in order, before anything that came after it.
                    del self._pending[tail:]
                    self._pending += _OVERLONG + b"\n"
                    self._skipping = True
                self._changed.notify_all()
        try:
            os.close(self._read_fd)
        except OSError:
            pass
        with self._changed:
            self.ended = True
            self._changed.notify_all()

    def _catch_up(self) -> None:
        """Checks and absorbs the whole lines that arrived (called with the lock held)."""
        end = self._pending.rfind(b"\n")
        if end >= 0:
            lines = bytes(self._pending[:end]).split(b"\n")
            del self._pending[:end + 1]
            for line in lines:
                if line == _OVERLONG:
                    self._reject_locked("a line longer than any record")
                self._accept_locked(line)

    def _reject_locked(self, why: str) -> None:
        if self.tampered is None:
            self.tampered = why

    def accept(self, line: bytes) -> None:
        """One line from the pipe; after the first bad one, nothing more is believed."""
        with self._changed:
            self._accept_locked(line)

    def _accept_locked(self, line: bytes) -> None:
        if self.tampered is not None:
            return
        parts = line.split(b" ", 2)
        # A sequence number has at most 20 digits (64 bits); a longer run of digits is no line of
        # the library's (and int() of thousands of digits raises).
        if len(parts) != 3 or not parts[0].isdigit() or len(parts[0]) > 20:
            self._reject_locked("a line without a seal")
            return
        sequence = int(parts[0])
        expected = hmac.new(self._key, parts[0] + b" " + parts[2], hashlib.sha256).hexdigest().encode()
        if not hmac.compare_digest(expected, parts[1]):
            self._reject_locked(f"line {sequence} carries a seal that is not the library's")
            return
        if sequence != self._next_sequence:
            self._reject_locked(f"line {self._next_sequence} is missing (line {sequence} came instead)")
            return
        self._next_sequence += 1
        try:
            record = json.loads(parts[2])
        except ValueError:
            self._reject_locked(f"line {sequence} is sealed but not a record")
            return
        if isinstance(record, dict):
            self._absorb(record)

    def _absorb(self, record: dict) -> None:
        kind = record.get("t")
        if kind == "kernel":
            self.kernel_records += 1
            self.kernels.append(Kernel(str(record.get("name") or "?"), int(record.get("stream", -1)),
                                       int(record.get("start", 0)), int(record.get("end", 0)), False))
        elif kind in ("memcpy", "memset"):
            label = "Memcpy " + str(record.get("kind", "")) if kind == "memcpy" else "Memset"
            self.kernels.append(Kernel(label, int(record.get("stream", -1)), int(record.get("start", 0)),
                                       int(record.get("end", 0)), True))
        elif kind == "flushed":
            at = int(record.get("at", 0))
            self.flushed_at = max(self.flushed_at, at)
            if "cupti" in record:
                self._clock_offsets.append(at - int(record["cupti"]))
            # Every launch the driver accepted before the flush has its kernel's record ahead of
            # this line, unless the kernel was still running; the judge waits for a line where
            # none is missing.
            self.missing = max(0, int(record.get("launches", 0)) - self.kernel_records)
            if self.missing == 0:
                self.complete_at = max(self.complete_at, at)
        elif kind == "header":
            self.header = True
        elif kind == "dropped":
            self.dropped += sum(int(record.get(k, 0)) for k in ("cupti", "unknown", "write_failures"))
        elif kind == "error":
            self.errors.append(str(record.get("msg", ""))[:500])

    # -- waiting ----------------------------------------------------------------------------

    def wait_for_header(self, patience_s: float = HEADER_PATIENCE_S) -> bool:
        """Whether the library announced itself (it does when the process initialises CUDA)."""
        return self._wait(lambda: self.header, patience_s)

    def wait_complete_past(self, monotonic_ns: int, patience_s: float = FLUSH_PATIENCE_S) -> str:
        """Waits until every record of work done before ``monotonic_ns`` has arrived, with a
        record for every kernel launch: "complete"; "incomplete" when flushes came but launches
        stayed without records (records switched off around them); "stopped" when no flush past
        ``monotonic_ns`` came at all."""
        if self._wait(lambda: self.complete_at >= monotonic_ns, patience_s):
            return "complete"
        return "incomplete" if self.flushed_at >= monotonic_ns else "stopped"

    def _wait(self, done, patience_s: float) -> bool:
        deadline = time.monotonic() + patience_s
        with self._changed:
            while True:
                self._catch_up()
                if done():
                    break
                if self.tampered is not None or self.ended:
                    return done()
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(min(left, 0.1))
            return True

    def between(self, start_ns: int, end_ns: int) -> list:
        """The records of work that started inside [start_ns, end_ns]."""
        with self._changed:
            self._catch_up()
            offset = self.clock_offset()
            return [k for k in self.kernels if start_ns <= k.start + offset <= end_ns]

    def clock_offset(self) -> int:
        """CLOCK_MONOTONIC minus CUPTI's clock (the median over the flushes so far; 0 before the
        first)."""
        if not self._clock_offsets:
            return 0
        ordered = sorted(self._clock_offsets)
        return ordered[len(ordered) // 2]


def record_judge_kernels(req) -> None:
    """The judge's own process records its kernels too (and drops the records) when the
    candidate's do: the recording costs each launch a little, and eager and torch.compile, timed
    here, must pay what the candidate's timed calls pay. Set before this process initialises
    CUDA, which is when the driver reads it."""
    if req.device == "cuda" and req.kernel_records_library:
        os.environ["CUDA_INJECTION64_PATH"] = req.kernel_records_library
        os.environ["KWB_KERNEL_RECORDS"] = "discard"


def flush_own_records() -> None:
    """In a candidate's process: has the injection library deliver the records so far, with a
    "flushed" line after them (the judge asks once its timed batches are over). Nothing happens
    without the library; the judge then finds no flush and says so."""
    from ..timing import phase_marks

    phase_marks.flush_records(phase_marks.injected_library())
