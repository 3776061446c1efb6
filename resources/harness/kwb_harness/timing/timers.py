"""Per-call timers and the statistics reported for each timed variant."""

import math
import statistics

L2_FLUSH_BYTES = 256 * 1024 * 1024


class CpuTimer:
    method = "wall-clock"
    flushes_l2 = False

    def __init__(self, clock):
        self._clock = clock

    def time_call(self, fn, args) -> tuple:
        """(device ms, host ms, output); on the CPU both times are the wall clock."""
        start = self._clock.perf_counter()
        output = fn(*args)
        elapsed = (self._clock.perf_counter() - start) * 1e3
        return elapsed, elapsed, output


class CudaTimer:
    """Times one call with CUDA events, starting from an idle GPU and (optionally) a cold L2.

    Each call starts from a full device synchronisation so that work queued by the previous
    call, or by another variant, cannot leak into this measurement; the host clock around the
    same call cross-checks work the events cannot see (other streams). Events, stream and
    synchronisation come from the trusted clock, captured before the candidate was imported, so
    a candidate cannot swap them.

    The L2 flush is queued, not waited for, before the start event (KernelBench times the same
    way): while the GPU writes the flush buffer the host queues the call, so the events measure
    the GPU's work and not the Python and launch overhead of reaching the first kernel, which
    on an idle GPU added 10-25% to kernels of tens of microseconds. The flush's own GPU time,
    between the flush event and the start event, comes off the host time. Work a candidate
    starts on another stream could run beside the flush, unseen by events and host clock alike;
    the kernel census flags any kernel off the timing stream (`side_stream`, strict).

    ``head_start_us`` queues a spin kernel of that many microseconds after the flush: the host's
    way to the first kernel is longer in the candidate's confined process (its guards, the
    sealed records) than in an in-process harness such as KernelBench's, and a flush alone may
    not cover it. The spin's GPU time comes off the host time like the flush's.
    """

    method = "cuda-events"

    def __init__(self, clock, flush_l2: bool, head_start_us: float = 0.0):
        import torch

        self._clock = clock
        # Writing a buffer several times larger than the L2 (60 MB on H100/H200) evicts
        # whatever the previous call left there, so every variant starts equally cold.
        self._flush_buffer = (
            torch.empty(L2_FLUSH_BYTES, dtype=torch.uint8, device="cuda") if flush_l2 else None
        )
        self.flushes_l2 = flush_l2
        self._flush = clock.new_event()
        self._start = clock.new_event()
        self._end = clock.new_event()
        self._head_cycles = self._cycles_for(head_start_us) if head_start_us > 0 else 0

    def _cycles_for(self, microseconds: float) -> int:
        """The spin kernel's cycle count for ``microseconds``, from one timed spin."""
        clock, calibration = self._clock, 2_000_000
        clock.synchronize_device()
        clock.record(self._start)
        clock.gpu_sleep(calibration)
        clock.record(self._end)
        clock.synchronize_device()
        cycles_per_us = calibration / max(1e-3, clock.elapsed_ms(self._start, self._end) * 1e3)
        return max(1, int(microseconds * cycles_per_us))

    def time_call(self, fn, args) -> tuple:
        clock = self._clock
        clock.synchronize_device()
        host_start = clock.perf_counter()
        ahead = self._flush_buffer is not None or self._head_cycles > 0
        if ahead:
            clock.record(self._flush)
        if self._flush_buffer is not None:
            self._flush_buffer.zero_()
        if self._head_cycles:
            clock.gpu_sleep(self._head_cycles)
        clock.record(self._start)
        output = fn(*args)
        clock.record(self._end)
        clock.synchronize_device()
        host_ms = (clock.perf_counter() - host_start) * 1e3
        if ahead:
            # The GPU was idle when the flush event was queued, so the flush (and the spin)
            # began at once: what they took on the GPU is host time that belongs to no variant.
            host_ms = max(0.0, host_ms - clock.elapsed_ms(self._flush, self._start))
        return clock.elapsed_ms(self._start, self._end), host_ms, output


def percentile(sorted_values: list, fraction: float) -> float:
    """Linear interpolation between closest ranks (the usual 'linear' definition)."""
    if not sorted_values:
        return math.nan
    position = (len(sorted_values) - 1) * fraction
    lower = math.floor(position)
    upper = math.ceil(position)
    if lower == upper:
        return sorted_values[lower]
    weight = position - lower
    return sorted_values[lower] * (1 - weight) + sorted_values[upper] * weight


def summarize(samples: list, host_samples: list, method: str) -> dict:
    ordered = sorted(samples)
    return {
        "available": True,
        "median_ms": statistics.median(ordered),
        "mean_ms": statistics.fmean(ordered),
        "min_ms": ordered[0],
        "max_ms": ordered[-1],
        "stdev_ms": statistics.stdev(ordered) if len(ordered) > 1 else 0.0,
        "p10_ms": percentile(ordered, 0.10),
        "p90_ms": percentile(ordered, 0.90),
        "samples": len(ordered),
        "method": method,
        "host_median_ms": statistics.median(host_samples),
        # Spread of single calls: stdev over mean.
        "cv": statistics.stdev(ordered) / statistics.fmean(ordered) if len(ordered) > 1 and statistics.fmean(ordered) > 0 else 0.0,
    }


def relative_spread(values: list) -> float:
    """Coefficient of variation of a list (0 for fewer than two values)."""
    if len(values) < 2:
        return 0.0
    mean = statistics.fmean(values)
    return statistics.stdev(values) / mean if mean > 0 else 0.0


def rotated(names: list, round_index: int) -> list:
    """Round r starts with the r-th variant, so no variant always runs first or last
    (clock ramp-up and thermal drift would otherwise favour one of them)."""
    if not names:
        return []
    shift = round_index % len(names)
    return names[shift:] + names[:shift]
