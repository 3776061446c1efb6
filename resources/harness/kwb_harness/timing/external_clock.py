"""The judge's own clock around the candidate's timed batches.

The candidate's process times its calls itself (CUDA events or the wall clock), and a candidate
can make that process report any number. The judge therefore also measures, with its own clock,
how long each batch took from its request to the reply. From that it subtracts what it measured
itself, in its own process, before the candidate existed: the round trip of an empty request, and
per call what the timer costs besides the call (synchronising, flushing the L2), what drawing
the next input set costs and what the commitment to the call's output costs (its digest,
integrity/output_digest.py, measured on the reference's output). What is left must be explained by the times the candidate's process
reported, give or take a tolerance for the loop around the calls; if far more time passed than
the reported times account for, the reported times are not the calls' times.
"""

import statistics
import time

# Unexplained time allowed in a batch: this share of its time, plus a fixed amount per call for
# the loop around the calls in the candidate's process (Python bookkeeping, output retention), plus
# a fixed amount per batch for the request's handling there beyond an empty round trip.
TOLERANCE_SHARE = 0.25
# Measured on the H200 under eight concurrent evaluations: honest candidates left up to 0.19 ms
# per call unexplained (bench/results/2026-12-01-h200-judge.md).
PER_CALL_ALLOWANCE_MS = {"cuda": 0.25, "cpu": 0.25}
# Measured on the 2-core CI machine: honest batches left 0.28 to 0.70 ms unexplained each idle
# (the request also rebuilds the call's closure and flushes the process's output); with both cores
# busy one run averaged 1.37 ms with a batch over its allowance
# (bench/results/2026-12-01-external-clock-cpu.md). No per-batch figure from the H200 yet.
PER_BATCH_ALLOWANCE_MS = {"cuda": 0.1, "cpu": 1.0}
# A lie that moves the median reported time covers more than half the calls, so it shows in more
# than half the batches; time a busy host took from one batch (a preemption, a page-in) does not.
# Strict therefore needs more than this share of the batches, and two of them where there are
# two or more: with two batches (CI's short timing) one preempted batch was half, and an honest
# solution was rejected on a loaded 2-core machine.
INCONSISTENT_BATCH_SHARE = 0.5
MIN_INCONSISTENT_BATCHES = 2
ROUND_TRIPS = 5


def round_trip_ms(ping) -> float:
    """The shortest of a few empty requests to the candidate's process. Measured before the
    candidate is imported there: afterwards its code could slow the replies down and so widen
    what the judge subtracts from every batch."""
    trips = []
    for _ in range(ROUND_TRIPS):
        started = time.perf_counter()
        ping()
        trips.append((time.perf_counter() - started) * 1e3)
    return min(trips)


class Overhead:
    """What the judge measured in its own process: per-call timer overhead outside the reported
    host time, and the host time an empty call reports."""

    def __init__(self, outside_ms: float, empty_host_ms: float):
        self.outside_ms = outside_ms
        self.empty_host_ms = empty_host_ms
        self.round_trip_ms = 0.0
        self.digest_ms = 0.0

    def as_dict(self) -> dict:
        return {"timer_outside_ms": self.outside_ms, "empty_call_host_ms": self.empty_host_ms,
                "round_trip_ms": self.round_trip_ms, "digest_ms": self.digest_ms}


def calibrate(timer, clock, calls: int = 15) -> Overhead:
    """Times empty calls with the stage's own timer."""

    def nothing():
        return None

    walls, hosts = [], []
    for _ in range(calls):
        started = clock.perf_counter()
        _, host, _ = timer.time_call(nothing, [])
        walls.append((clock.perf_counter() - started) * 1e3)
        hosts.append(host)
    wall = statistics.median(walls[2:] or walls)
    host = statistics.median(hosts[2:] or hosts)
    return Overhead(max(0.0, wall - host), host)


def digest_ms(output, clock, times: int = 5) -> float:
    """What committing to one output like ``output`` costs, the shortest of a few tries (the
    reference's output, digested in the judge's process before the candidate is imported)."""
    from ..integrity import output_digest

    key = output_digest.new_key()
    tries = []
    for _ in range(times):
        started = clock.perf_counter()
        output_digest.digest(output, key)
        tries.append((clock.perf_counter() - started) * 1e3)
    return min(tries)


class _Batch:
    """One timed batch as the judge saw it and as the candidate's process reported it."""

    def __init__(self, wall_ms: float, reported_host_ms: float, calls: int, input_ms: float,
                 waiting_ms: float = 0.0):
        self.wall_ms = wall_ms
        # Time the machine kept the candidate's calling thread or the judge waiting for a CPU
        # (timing/scheduler_wait.py): no one's work.
        self.waiting_ms = waiting_ms
        self.reported_host_ms = reported_host_ms
        self.calls = calls
        self.input_ms = input_ms

    def excused_wait_ms(self) -> float:
        """The share of the waiting that fell outside the reported calls. A wait inside a call is
        already in the call's reported time; excused again, it hid as much of the batch from the
        judge (a loaded 2-core machine: 10 to 60 ms per 400 ms matmul call, counted twice). The
        counters do not say when a wait happened, so it is taken as spread evenly over the batch."""
        if self.wall_ms <= 0:
            return 0.0
        return self.waiting_ms * max(0.0, self.wall_ms - self.reported_host_ms) / self.wall_ms


class ExternalTiming:
    """Accumulates the batches' external and reported times; decides the flag."""

    def __init__(self, overhead: Overhead, device: str):
        self.overhead = overhead
        self.device = device
        self.batches = []
        self.reported_device_ms = 0.0
        self.device_after_host = 0

    def add(self, wall_ms: float, device_ms: list, host_ms: list, input_ms: float,
            waiting_ms: float = 0.0) -> None:
        self.batches.append(_Batch(wall_ms, sum(host_ms), len(device_ms), input_ms, waiting_ms))
        self.reported_device_ms += sum(device_ms)
        # Events on the stream lie inside the host's window around the call; on the CPU there is
        # one clock, and the timer reports its reading as both (timing/timers.py CpuTimer).
        if self.device == "cpu":
            self.device_after_host += sum(1 for d, h in zip(device_ms, host_ms) if d != h)
        else:
            self.device_after_host += sum(1 for d, h in zip(device_ms, host_ms) if d > h + 0.05)

    @property
    def calls(self) -> int:
        return sum(b.calls for b in self.batches)

    def _unexplained(self, batches: list) -> float:
        o = self.overhead
        return sum(b.wall_ms - (b.reported_host_ms + b.calls * (o.outside_ms + o.digest_ms) + b.input_ms
                                + o.round_trip_ms + b.excused_wait_ms()) for b in batches)

    def _allowed(self, batches: list) -> float:
        return sum(TOLERANCE_SHARE * b.wall_ms + b.calls * PER_CALL_ALLOWANCE_MS[self.device]
                   + PER_BATCH_ALLOWANCE_MS[self.device] for b in batches)

    def unexplained_ms(self) -> float:
        return self._unexplained(self.batches)

    def allowed_ms(self) -> float:
        return self._allowed(self.batches)

    def inconsistent_batches(self) -> int:
        return sum(1 for b in self.batches if self._unexplained([b]) > self._allowed([b]))

    def evidence(self) -> dict:
        return {"calls": self.calls, "batches": len(self.batches),
                "wall_ms": sum(b.wall_ms for b in self.batches),
                "reported_host_ms": sum(b.reported_host_ms for b in self.batches),
                "reported_device_ms": self.reported_device_ms,
                "input_ms": sum(b.input_ms for b in self.batches),
                "scheduler_wait_ms": sum(b.waiting_ms for b in self.batches),
                "scheduler_wait_excused_ms": sum(b.excused_wait_ms() for b in self.batches),
                "unexplained_ms": self.unexplained_ms(), "allowed_ms": self.allowed_ms(),
                "inconsistent_batches": self.inconsistent_batches(),
                "consistent": self.flag() is None, **self.overhead.as_dict()}

    def batch_lines(self) -> list:
        """One line per batch: what the judge's clock saw and how much of it each part explains."""
        o = self.overhead
        return [f"batch {i + 1}: {b.calls} call(s), judge's clock {b.wall_ms:.2f} ms = reported {b.reported_host_ms:.2f}"
                f" + digests {b.calls * o.digest_ms:.2f} + inputs {b.input_ms:.2f} + waiting for a CPU "
                f"{b.excused_wait_ms():.2f} (of {b.waiting_ms:.2f}) + unexplained {self._unexplained([b]):.2f} (allowed {self._allowed([b]):.2f})"
                for i, b in enumerate(self.batches)]

    def flag(self) -> dict | None:
        """Strict when the reported times are not the calls' times; a warning when the host
        took time from a few batches only."""
        if not self.batches:
            return None
        if self.device_after_host:
            return {"code": "timing_mismatch", "severity": "strict",
                    "reason": f"the candidate's process reported {self.device_after_host} call(s) whose device time "
                              + ("differs from the host time (on the CPU both are the same clock's reading)"
                                 if self.device == "cpu" else "exceeds the host time around them")
                              + ": the reported times are not measurements"}
        unexplained, allowed = self.unexplained_ms(), self.allowed_ms()
        if unexplained <= allowed:
            return None
        wall = sum(b.wall_ms for b in self.batches)
        reported = sum(b.reported_host_ms for b in self.batches)
        inconsistent = self.inconsistent_batches()
        summary = (f"the judge's clock saw {wall:.2f} ms for {self.calls} timed calls in {len(self.batches)} "
                   f"batches, of which {unexplained:.2f} ms are not explained by the {reported:.2f} ms the "
                   f"candidate's process reported (allowed {allowed:.2f} ms)")
        batches = len(self.batches)
        if inconsistent > INCONSISTENT_BATCH_SHARE * batches and \
                inconsistent >= min(MIN_INCONSISTENT_BATCHES, batches):
            return {"code": "timing_mismatch", "severity": "strict",
                    "reason": f"{summary}, in {inconsistent} of the batches: the reported times are shorter "
                              "than the calls"}
        return {"code": "timing_disturbed", "severity": "warning",
                "reason": f"{summary}, but in only {inconsistent} of the batches: the host was busy (a "
                          "preemption, paging), not the reported times short"}
