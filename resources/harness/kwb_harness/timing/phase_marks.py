"""NVTX ranges that mark the profile stage's phases on a timeline.

The CUPTI injection library (``kwb timeline``) and Nsight Systems show them above the kernels:
``eager``, ``compile`` and ``candidate`` around each variant's timed round, ``iteration N``
around each timed call, ``warmup NAME`` and ``torch.compile first call``. On the CPU every
mark is a no-op, and torch.cuda is never touched.

The injection library is also told when to deliver its records: the harness leaves with
``os._exit`` (no atexit handlers run), and torch's profiler, used untimed after the timing,
takes CUPTI's buffer callbacks over.
"""

import contextlib
import ctypes
import os


class PhaseMarks:
    """Captured before the candidate is imported, like the trusted clock, so a candidate that
    rebinds torch.cuda.nvtx does not change what the harness marks."""

    def __init__(self, device: str):
        self._push = None
        self._pop = None
        if device != "cuda":
            return
        try:
            import torch

            self._push = torch.cuda.nvtx.range_push
            self._pop = torch.cuda.nvtx.range_pop
        except Exception:  # an NVTX-less torch build: the timeline simply has no ranges
            self._push = self._pop = None

    @property
    def enabled(self) -> bool:
        return self._push is not None

    @contextlib.contextmanager
    def range(self, name: str):
        if self._push is None:
            yield
            return
        self._push(name)
        try:
            yield
        finally:
            self._pop()


def _injection_library():
    """The already-loaded injection library recording a timeline, or None (not recording, or
    CPU mode)."""
    if not os.environ.get("KWB_TIMELINE_OUT"):
        return None
    return injected_library()


def injected_library():
    """The injection library the CUDA driver loaded into this process, whatever it records
    for (a timeline, the judge's sealed kernel records), or None."""
    path = os.environ.get("CUDA_INJECTION64_PATH")
    if not path:
        return None
    try:
        # RTLD_NOLOAD: only a library the CUDA driver has already injected; never load it here.
        return ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
    except OSError:
        return None


def timeline_recording() -> bool:
    """Whether this process records a timeline through the injection library."""
    return bool(os.environ.get("CUDA_INJECTION64_PATH") and os.environ.get("KWB_TIMELINE_OUT"))


def flush_timeline() -> None:
    """Delivers the records completed so far."""
    flush_records(_injection_library())


def flush_records(library) -> None:
    """Has ``library`` (:func:`injected_library`) deliver the records completed so far."""
    try:
        if library is not None:
            library.kwbCuptiFlush()
    except (AttributeError, OSError):  # another library under that name: nothing to flush
        pass


def finish_timeline() -> None:
    """The final flush and end record; call before os._exit."""
    library = _injection_library()
    try:
        if library is not None:
            library.kwbCuptiFinish()
    except (AttributeError, OSError):
        pass
