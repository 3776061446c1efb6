"""The memory-bandwidth floor: no correct candidate can be faster than moving its bytes.

Every input (and parameter) must be read at least once and every output written once. That
many bytes over the copy bandwidth measured on this device right now gives a time below which
a measurement is physically implausible: the candidate skipped work, or the timing missed it.
Such a result is flagged for review (a warning), like a speed-up of more than 10x over eager.
"""

_CPU_PROBE_BYTES = 256 << 20
_GPU_PROBE_BYTES = 1 << 30


def _cpu_cache_bytes() -> int:
    try:
        with open("/sys/devices/system/cpu/cpu0/cache/index3/size", "r", encoding="utf-8") as handle:
            text = handle.read().strip().upper()
        factor = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1], 1)
        return int(text.rstrip("KMG")) * factor
    except (OSError, ValueError, IndexError):
        return 64 << 20


def copy_bandwidth_gbs(device: str, clock) -> float:
    """Device-to-device copy bandwidth in GB/s (read + write bytes over time), best of 5."""
    import torch

    size = _GPU_PROBE_BYTES if device == "cuda" else _CPU_PROBE_BYTES
    try:
        src = torch.empty(size, dtype=torch.uint8, device=device).fill_(1)
        dst = torch.empty_like(src)
    except RuntimeError:
        return 0.0
    best = float("inf")
    for _ in range(6):
        if device == "cuda":
            start, end = clock.new_event(), clock.new_event()
            clock.synchronize_device()
            clock.record(start)
            dst.copy_(src)
            clock.record(end)
            clock.synchronize_device()
            seconds = clock.elapsed_ms(start, end) / 1e3
        else:
            began = clock.perf_counter()
            dst.copy_(src)
            seconds = clock.perf_counter() - began
        best = min(best, seconds)
    del src, dst
    return 2 * size / best / 1e9 if best > 0 else 0.0


def floor(bytes_moved: int, bandwidth_gbs: float) -> float:
    return bytes_moved / (bandwidth_gbs * 1e9) * 1e3 if bandwidth_gbs > 0 else 0.0


def applies(device: str, bytes_moved: int) -> bool:
    """On the CPU, data that fits in the last-level cache can legitimately beat DRAM bandwidth
    (there is no cache flush between calls), so the floor only holds for larger tasks. On the
    GPU the L2 is flushed before every timed call."""
    return device == "cuda" or bytes_moved > 4 * _cpu_cache_bytes()


def floor_flag(candidate_ms: float, floor_ms: float, bytes_moved: int, bandwidth_gbs: float) -> dict | None:
    if floor_ms <= 0 or candidate_ms >= floor_ms:
        return None
    return {
        "code": "faster_than_memory_floor",
        "severity": "warning",
        "reason": f"{candidate_ms:.4f} ms is below the memory floor of {floor_ms:.4f} ms "
                  f"({bytes_moved / 1e6:.1f} MB at the measured {bandwidth_gbs:.0f} GB/s): review this result",
    }
