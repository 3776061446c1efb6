"""The candidate as one of the profile stage's timed variants, run in its own process.

Each batch of calls is drawn from the candidate's input pool, which exists twice: in the
candidate's process, where the calls run, and here, where the judge keeps a copy to know the
inputs of every call. The judge draws the rescaling factors of both. After the batch, and only
then, the judge picks several calls at random and asks for their outputs, which the candidate's
process kept for all calls alike; each is compared with the reference on the judge's copy of the
inputs. The judge's own clock around every batch cross-checks the times the candidate's process
reports (timing/external_clock.py).
"""

import math
import random
import time

from .. import device as devices
from .. import values
from ..errors import CANDIDATE_RUN, OUTPUT_MISMATCH, HarnessError
from ..integrity import kernel_census, output_digest
from ..integrity.kernel_records import FLUSH_PATIENCE_S
from ..integrity.output_check import TimedOutputCheck
from ..timing import scheduler_wait
from ..timing.external_clock import ExternalTiming

CANDIDATE_SALT = 303


def _times(reply: dict, key: str, count: int) -> list:
    times = reply.get(key)
    if not isinstance(times, list) or len(times) != count or not all(
            isinstance(t, (int, float)) and not isinstance(t, bool) and math.isfinite(t) and t >= 0 for t in times):
        raise HarnessError(CANDIDATE_RUN, f"the candidate's process sent malformed timings ({key})")
    return [float(t) for t in times]


def checks_per_batch(count: int) -> int:
    """Several calls per batch: a candidate that is right on some calls only is caught often."""
    return min(count, max(2, count // 4))


def _no_census(reason: str, code: str | None = None, finding: str = "") -> dict:
    """No census, for ``reason``; with ``code``, the strict finding that rides along."""
    census = {"available": False, "reason": reason}
    if code:
        census["flag"] = {"code": code, "severity": "strict", "reason": finding}
    return census


class SealedCensus:
    """The judge's windows (CLOCK_MONOTONIC) around every batch of the candidate's calls, and the
    harness's own batch before the candidate's import; with the sealed records of the candidate's
    process (integrity/kernel_records.py) they give the kernel census."""

    def __init__(self, records):
        self.records = records
        self.windows = []  # (start_ns, end_ns, calls)
        self.harness = None
        self.unavailable = None
        self.flush_patience_s = FLUSH_PATIENCE_S

    def calibrate(self, process, mirror_pool, req, calls: int = 8) -> None:
        """Before the candidate's import: a batch with a stand-in forward (the reference's
        output, copied), whose kernels are the harness's own per call."""
        if not self.records.wait_for_header():
            self.unavailable = "the injection library sent nothing from the candidate's process" + (
                f" ({self.records.errors[-1]})" if self.records.errors else "")
            return
        process.ask({"op": "standin", "seed": req.seed})
        # Every input set once first, outside the window: a set is rescaled only when it comes
        # round again, so from then on every call rescales its inputs, as every timed call of the
        # candidate's does. Counted from a fresh pool, the rescales came out at half a call or
        # less and were left in the candidate's census (a 134 MB input's rescale, as long as the
        # kernel, gave an honest sum reduction timing_missed_work on the H200, 2026-12-02).
        process.ask(self._harness_batch(mirror_pool, req, len(mirror_pool), last=False))
        message = self._harness_batch(mirror_pool, req, calls, last=True)
        started = time.monotonic_ns()
        process.ask(message)
        self.harness = (started, time.monotonic_ns(), calls)

    @staticmethod
    def _harness_batch(mirror_pool, req, calls: int, last: bool) -> dict:
        factors = [mirror_pool.draw_factor() for _ in range(calls)]
        for factor in factors:  # the judge's copy of the pool stays in step with the candidate's
            mirror_pool.next(factor)
        return {"op": "harness_calls", "seed": req.seed, "digest_key": output_digest.new_key(), "last": last,
                "inputs": [{"pool": CANDIDATE_SALT, "factor": f} for f in factors]}

    def ask(self, process, message: dict, calls: int) -> tuple:
        started = time.monotonic_ns()
        try:
            return process.ask(message)
        finally:
            self.windows.append((started, time.monotonic_ns(), calls))

    def take(self, own: set, process=None) -> dict:
        """The census, or {"available": False, "reason": ...}; a strict ``integrity`` finding
        rides along under "flag" when the records were tampered with or stopped. ``process``
        (the candidate's) is asked to flush its records first: the library flushes only when
        asked, outside the timed batches."""
        records = self.records
        if self.unavailable or self.harness is None or not self.windows:
            return _no_census(self.unavailable or "no batch of calls was recorded")
        last = max(end for _, end, _ in self.windows)
        if process is not None:
            try:
                process.ask({"op": "flush"})
            except HarnessError as exc:
                return _no_census("the candidate's process refused to flush its records", "kernel_records_stopped",
                                  f"the candidate's process failed the judge's request to deliver its kernel "
                                  f"records: {exc.message}")
        delivered = records.wait_complete_past(last, self.flush_patience_s)
        if records.tampered is not None:
            return _no_census("the sealed kernel records were tampered with", "kernel_records_tampered",
                              "a line in the judge's pipe of sealed kernel records was not the injection "
                              f"library's: {records.tampered}")
        if records.dropped:
            return _no_census(f"CUPTI dropped {records.dropped} kernel records")
        if delivered == "stopped":
            return _no_census("the kernel records stopped", "kernel_records_stopped",
                              "the injection library in the candidate's process stopped delivering kernel "
                              "records while the candidate ran (its buffers taken over, its thread or pipe stopped)")
        if delivered == "incomplete":
            return _no_census("kernel launches without records", "kernel_records_incomplete",
                              f"{records.missing} kernel launch(es) in the candidate's process left no kernel "
                              "record: the recording was switched off around them")
        start, end, harness_calls = self.harness
        window_kernels = [k for s, e, _ in self.windows for k in records.between(s, e)]
        calls = sum(n for _, _, n in self.windows)
        return kernel_census.from_records(window_kernels, calls, records.between(start, end), harness_calls, own)


class RemoteTimedCandidate:
    def __init__(self, process, mirror_pool, ref_model, req, overhead, sealed=None):
        """``overhead`` includes the round trip, measured before the candidate was imported;
        ``sealed``, the :class:`SealedCensus` whose windows every batch goes into (GPU)."""
        self.process = process
        self.sealed = sealed
        self._mirror = mirror_pool
        self._req = req
        # Not seeded: which calls get checked must not be predictable.
        self._random = random.Random()
        self.external = ExternalTiming(overhead, req.device)
        process.ask({"op": "model", "seed": req.seed})
        self.outputs = TimedOutputCheck(ref_model, req)
        # Where the judge's side of the batches goes (the profile's phase parts).
        self.seconds = {"draw inputs": 0.0, "candidate calls": 0.0, "fetch outputs": 0.0, "check outputs": 0.0}

    def _draw_inputs(self, count: int) -> tuple:
        """(factors, the judge's copies of the inputs, the judge's time for drawing them). Drawn
        as the candidate's process draws its own (devices.one_thread); time this thread spent
        waiting for a CPU is left out, as the candidate's is excused (scheduler_wait)."""
        req = self._req
        factors, copies = [], []
        spent = 0.0
        for _ in range(count):
            factor = self._mirror.draw_factor()
            with devices.one_thread(req.device):
                waited = scheduler_wait.own_wait_ns()
                started = time.perf_counter()
                inputs = self._mirror.next(factor)
                devices.synchronize(req.device)
                spent += time.perf_counter() - started - (scheduler_wait.own_wait_ns() - waited) / 1e9
            factors.append(factor)
            copies.append(values.clone(inputs))
        return factors, copies, max(0.0, spent) * 1e3

    def batch(self, count: int, warmup: bool = False) -> tuple:
        """Runs ``count`` timed calls; returns the reported (device ms, host ms) lists. Warm-up
        batches are checked but not part of the external timing: lazy one-time costs (module
        loading, allocator growth) land there."""
        req = self._req
        drawing = time.perf_counter()
        factors, copies, input_ms = self._draw_inputs(count)
        self.seconds["draw inputs"] += time.perf_counter() - drawing
        key = output_digest.new_key()
        message = {"op": "calls", "seed": req.seed, "digest_key": key,
                   "inputs": [{"pool": CANDIDATE_SALT, "factor": f} for f in factors]}
        if req.device == "cuda":
            # Its own request, outside the judge's clock around the batch: the kept outputs'
            # blocks are allocated (once) before the calls rather than inside them.
            self.process.ask({"op": "reserve", "calls": count})
        waits_before = scheduler_wait.sample(self.process.pid)
        started = time.perf_counter()
        reply, _ = self.sealed.ask(self.process, message, count) if self.sealed else self.process.ask(message)
        wall_ms = (time.perf_counter() - started) * 1e3
        self.seconds["candidate calls"] += wall_ms / 1e3
        waiting_ms = scheduler_wait.excused_ms(waits_before, scheduler_wait.sample(self.process.pid))
        device_ms = _times(reply, "device_ms", count)
        host_ms = _times(reply, "host_ms", count)
        if not warmup:
            self.external.add(wall_ms, device_ms, host_ms, input_ms, waiting_ms)
        self._check_some(reply, key, copies)
        return device_ms, host_ms

    def _check_some(self, reply: dict, key: int, copies: list) -> None:
        """Fetches several of the batch's outputs, picked now, and compares each with the
        reference and with the digest the reply committed to."""
        count = len(copies)
        digests = output_digest.committed_digests(reply, count)
        picks = sorted(self._random.sample(range(count), checks_per_batch(count)))
        fetching = time.perf_counter()
        payload = self.process.fetch(picks, self._req.device)
        checking = time.perf_counter()
        self.seconds["fetch outputs"] += checking - fetching
        outputs = payload.get("outputs") if isinstance(payload, dict) else None
        if not isinstance(outputs, list) or len(outputs) != len(picks):
            raise HarnessError(OUTPUT_MISMATCH, "the candidate's process did not return the outputs asked for")
        changed = output_digest.first_changed(outputs, picks, digests, key)
        if changed is not None and self.outputs.flag is None:
            self.outputs.flag = output_digest.changed_flag(changed)
            print("flag [strict] " + self.outputs.flag["code"] + ": " + self.outputs.flag["reason"])
        precise = self._random.choice(picks)
        for index, output in zip(picks, outputs):
            self.outputs.check(output, copies[index], precise=index == precise)
        self.seconds["check outputs"] += time.perf_counter() - checking

    def census(self) -> dict:
        """The candidate's kernels over a few calls on pool inputs (GPU); their outputs are
        checked like a timed batch's."""
        factors, copies, _ = self._draw_inputs(3)
        key = output_digest.new_key()
        reply, _ = self.process.ask({"op": "census", "seed": self._req.seed, "pool": CANDIDATE_SALT,
                                     "factors": factors, "digest_key": key})
        self._check_some(reply, key, copies)
        return reply.get("census")
