"""Clocks and synchronisation captured before any candidate code is imported.

The candidate runs in the harness process, so it can rebind ``time.perf_counter``,
``torch.cuda.synchronize`` or ``torch.cuda.Event.elapsed_time`` to functions that report less
time. The timers keep the objects captured here (and, for Python functions, their code
objects), so a rebinding cannot change a measurement; :func:`tampering` then compares the live
names with the captured ones, and any difference is a strict ``timer_tampering`` flag.
"""

import time

# Dotted names resolved from their root module; each is compared by identity afterwards.
_WATCHED = (
    "time.perf_counter", "time.perf_counter_ns", "time.monotonic", "time.monotonic_ns",
    "time.time", "time.time_ns", "time.process_time", "time.sleep",
    "torch.cuda.synchronize", "torch.cuda.Event", "torch.cuda.Stream",
    "torch.cuda.current_stream", "torch.cuda.default_stream", "torch.cuda.stream",
    "torch.cuda.Event.record", "torch.cuda.Event.elapsed_time", "torch.cuda.Event.synchronize",
    "torch.cuda.Event.query", "torch.cuda.Event.wait", "torch.cuda.Stream.synchronize",
    "torch.cuda.Stream.wait_stream", "torch._C._cuda_synchronize", "torch._C._CudaEventBase",
    "torch.no_grad", "torch.Tensor", "torch.nn.Module.__call__", "torch.nn.Module._call_impl",
)

_MISSING = object()


def _resolve(path: str):
    import importlib

    parts = path.split(".")
    try:
        obj = importlib.import_module(parts[0])
    except ImportError:
        return _MISSING
    for part in parts[1:]:
        # The class dict, not getattr: a patched descriptor must be seen as itself.
        holder = obj
        obj = holder.__dict__.get(part, _MISSING) if isinstance(holder, type) else getattr(holder, part, _MISSING)
        if obj is _MISSING:
            return _MISSING
    return obj


class TrustedClock:
    """The original timing functions, captured once at harness start-up."""

    def __init__(self):
        self.perf_counter = time.perf_counter
        self._captured = {}
        for path in _WATCHED:
            obj = _resolve(path)
            self._captured[path] = (obj, getattr(obj, "__code__", None))
        self.cuda = None

    def capture_cuda(self) -> None:
        """Captures the CUDA event and stream entry points at the C level (torch must be
        imported and CUDA available). Python wrappers look names up at call time, so only the
        C functions are safe from later rebinding."""
        import torch

        base = torch._C._CudaEventBase
        self.cuda = {
            "event_type": torch.cuda.Event,
            "record": base.record,
            "elapsed_time": base.elapsed_time,
            "synchronize_device": torch._C._cuda_synchronize,
            "sleep": getattr(torch._C, "_cuda_sleep", None),  # used only with a head start
            "stream": torch.cuda.current_stream(),
        }

    def new_event(self):
        return self.cuda["event_type"](enable_timing=True)

    def record(self, event) -> None:
        self.cuda["record"](event, self.cuda["stream"])

    def elapsed_ms(self, start, end) -> float:
        return self.cuda["elapsed_time"](start, end)

    def synchronize_device(self) -> None:
        self.cuda["synchronize_device"]()

    def gpu_sleep(self, cycles: int) -> None:
        """Queues a kernel that spins for ``cycles`` GPU clock cycles on the current stream."""
        if self.cuda["sleep"] is None:
            raise RuntimeError("this torch has no GPU spin kernel (torch._C._cuda_sleep) for a head start")
        self.cuda["sleep"](cycles)

    def tampering(self) -> list:
        """Names whose live object (or code) no longer matches the captured one."""
        changed = []
        for path, (obj, code) in self._captured.items():
            now = _resolve(path)
            if now is not obj or (code is not None and getattr(now, "__code__", None) is not code):
                changed.append(path)
        return changed


def tampering_flag(clock: TrustedClock) -> dict | None:
    changed = clock.tampering()
    if not changed:
        return None
    return {
        "code": "timer_tampering",
        "severity": "strict",
        "reason": "the candidate replaced timing or synchronisation functions: " + ", ".join(changed),
    }
