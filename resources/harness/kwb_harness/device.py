"""Torch-wide settings and device helpers shared by all stages that execute models."""

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


def configure(device: str) -> None:
    import torch

    # Eager baselines must stay true fp32: TF32 would make the reference both faster and
    # less precise than the candidate is allowed to be.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    # Autotuning picks different algorithms run to run and charges its search to the first
    # timed calls.
    torch.backends.cudnn.benchmark = False
    if device == "cpu":
        torch.set_num_threads(max(1, int(os.environ.get("KWB_CPU_THREADS", "2"))))


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
