"""Torch-wide settings and device helpers shared by all stages that execute models."""

import contextlib
import os

from .errors import CUDA_ERROR, HarnessError

# Substrings of errors that the CUDA runtime, cuBLAS or cuDNN raise; after most of them
# the CUDA context is unusable, so they are reported apart from ordinary exceptions.
_CUDA_MARKERS = (
    "CUDA error",
    "CUDA driver error",
    "cudaError",
    "illegal memory access",
    "illegal instruction",
    "misaligned address",
    "device-side assert",
    "unspecified launch failure",
    "CUBLAS_STATUS",
    "CUDNN_STATUS",
    "cuDNN error",
    "an illegal",
)


def configure(device: str, threads: int | None = 0) -> None:
    """``threads``: the stage's share of the cores (Request.cpu_threads); 0 keeps the device's
    default. On a GPU too: inputs are drawn and outputs compared on the CPU, where a dozen
    stages at once, each with a thread per core, would wait for each other's threads."""
    import torch

    # Eager baselines must stay true fp32: TF32 would make the reference both faster and
    # less precise than the candidate is allowed to be.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    # Autotuning picks different algorithms run to run and charges its search to the first
    # timed calls.
    torch.backends.cudnn.benchmark = False
    if threads:
        use_threads(threads)
    elif device == "cpu":
        torch.set_num_threads(max(1, int(os.environ.get("KWB_CPU_THREADS", "2"))))


def use_threads(threads: int | None) -> None:
    """The judge's torch threads for this request (Request.cpu_threads); 0 or None: as they are."""
    if not threads:
        return
    import torch

    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)


@contextlib.contextmanager
def one_thread(device: str):
    """The harness's own work around a timed call (drawing the next input set, the digest of the
    output) on one CPU thread, whose time the judge can account for. With two threads on a busy
    two-core machine, every such op waited for its second thread to get a CPU, and the 64 MB
    output digest took 80 ms where it took 9 idle; that wait shows in no run queue of the
    calling thread, and honest batches were left with it unexplained (timing_mismatch in CI).
    On one thread it took 13 to 27 ms under the same load, the rest being waits the judge reads
    (timing/scheduler_wait.py). Switching is cheap (under a microsecond) and leaves the calls'
    own thread count as it was."""
    if device != "cpu":
        yield
        return
    import torch

    threads = torch.get_num_threads()
    if threads == 1:
        yield
        return
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def require(device: str) -> None:
    if device != "cuda":
        return
    import torch

    if not torch.cuda.is_available():
        raise HarnessError(
            CUDA_ERROR,
            "device 'cuda' was requested but torch.cuda.is_available() is False "
            f"(torch {torch.__version__}, built for CUDA {torch.version.cuda or 'none'})",
        )


def synchronize(device: str) -> None:
    if device == "cuda":
        import torch

        torch.cuda.synchronize()


def is_cuda_error(exc: BaseException) -> bool:
    import torch

    accelerator_error = getattr(torch, "AcceleratorError", None)
    if accelerator_error is not None and isinstance(exc, accelerator_error):
        return True
    text = str(exc)
    return any(marker in text for marker in _CUDA_MARKERS)
