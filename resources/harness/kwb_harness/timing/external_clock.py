"""The judge's own clock around the candidate's timed batches.

The candidate's process times its calls itself (CUDA events or the wall clock), and a candidate
can make that process report any number. The judge therefore also measures, with its own clock,
how long each batch took from its request to the reply. From that it subtracts what it measured
itself, in its own process, before the candidate existed: the round trip of an empty request, and
per call what the timer costs besides the call (synchronising, flushing the L2) and what drawing
the next input set costs. What is left must be explained by the times the candidate's process
reported, give or take a tolerance for the loop around the calls; if far more time passed than
the reported times account for, the reported times are not the calls' times.
"""

import statistics
import time

# Unexplained time allowed: this share of the batches' time, plus a fixed amount per call for the
# loop around the calls in the candidate's process (Python bookkeeping, output retention).
TOLERANCE_SHARE = 0.25
# Measured on the H200 under eight concurrent evaluations: honest candidates left up to 0.19 ms
# per call unexplained (bench/results/2026-12-01-h200-judge.md).
PER_CALL_ALLOWANCE_MS = {"cuda": 0.25, "cpu": 0.25}


class Overhead:
    """What the judge measured in its own process: per-call timer overhead outside the reported
    host time, and the host time an empty call reports."""

    def __init__(self, outside_ms: float, empty_host_ms: float):
        self.outside_ms = outside_ms
        self.empty_host_ms = empty_host_ms
        self.round_trip_ms = 0.0

    def as_dict(self) -> dict:
        return {"timer_outside_ms": self.outside_ms, "empty_call_host_ms": self.empty_host_ms,
                "round_trip_ms": self.round_trip_ms}


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


class ExternalTiming:
    """Accumulates the batches' external and reported times; decides the flag."""

    def __init__(self, overhead: Overhead, device: str):
        self.overhead = overhead
        self.device = device
        self.calls = 0
        self.wall_ms = 0.0
        self.reported_host_ms = 0.0
        self.reported_device_ms = 0.0
        self.input_ms = 0.0
        self.device_after_host = 0
        self.batches = 0

    def measure_round_trip(self, ping) -> None:
        trips = []
        for _ in range(5):
            started = time.perf_counter()
            ping()
            trips.append((time.perf_counter() - started) * 1e3)
        self.overhead.round_trip_ms = min(trips)

    def add(self, wall_ms: float, device_ms: list, host_ms: list, input_ms: float) -> None:
        self.calls += len(device_ms)
        self.wall_ms += wall_ms
        self.reported_host_ms += sum(host_ms)
        self.reported_device_ms += sum(device_ms)
        self.input_ms += input_ms
        # Events on the stream lie inside the host's window around the call.
        self.device_after_host += sum(1 for d, h in zip(device_ms, host_ms) if d > h + 0.05)
        self.batches += 1

    def unexplained_ms(self) -> float:
        o = self.overhead
        expected = (self.reported_host_ms + self.calls * o.outside_ms + self.input_ms
                    + self.batches * o.round_trip_ms)
        return self.wall_ms - expected

    def allowed_ms(self) -> float:
        return TOLERANCE_SHARE * self.wall_ms + self.calls * PER_CALL_ALLOWANCE_MS[self.device]

    def evidence(self) -> dict:
        return {"calls": self.calls, "wall_ms": self.wall_ms, "reported_host_ms": self.reported_host_ms,
                "reported_device_ms": self.reported_device_ms, "input_ms": self.input_ms,
                "unexplained_ms": self.unexplained_ms(), "allowed_ms": self.allowed_ms(),
                "consistent": self.flag() is None, **self.overhead.as_dict()}

    def flag(self) -> dict | None:
        if self.calls == 0:
            return None
        if self.device_after_host:
            return {"code": "timing_mismatch", "severity": "strict",
                    "reason": f"the candidate's process reported {self.device_after_host} call(s) whose device time "
                              "exceeds the host time around them: the reported times are not measurements"}
        unexplained = self.unexplained_ms()
        if unexplained <= self.allowed_ms():
            return None
        return {"code": "timing_mismatch", "severity": "strict",
                "reason": f"the judge's clock saw {self.wall_ms:.2f} ms for {self.calls} timed calls, of which "
                          f"{unexplained:.2f} ms are not explained by the {self.reported_host_ms:.2f} ms the "
                          "candidate's process reported (allowed "
                          f"{self.allowed_ms():.2f} ms): the reported times are shorter than the calls"}
