"""The few CUDA driver functions the runtime needs, through ctypes.

torch already holds the primary context of each device and makes it current on the calling
thread; modules loaded here live in that context, so their kernels run next to torch's on the
same streams. The driver is opened lazily: importing the runtime on a machine without a GPU
works, and the first launch explains what is missing.
"""

import ctypes
import threading

_lock = threading.Lock()
_driver = None

CUresult = ctypes.c_int
CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8


class CudaDriverError(RuntimeError):
    """A CUDA driver call failed; the message names the call and the driver's error."""


def _declare(lib) -> None:
    lib.cuModuleLoadData.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p]
    lib.cuModuleGetFunction.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p, ctypes.c_char_p]
    lib.cuModuleUnload.argtypes = [ctypes.c_void_p]
    lib.cuFuncSetAttribute.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
    lib.cuLaunchKernel.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [
        ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    lib.cuCtxGetCurrent.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    lib.cuGetErrorName.argtypes = [CUresult, ctypes.POINTER(ctypes.c_char_p)]
    lib.cuGetErrorString.argtypes = [CUresult, ctypes.POINTER(ctypes.c_char_p)]
    for name in ("cuModuleLoadData", "cuModuleGetFunction", "cuModuleUnload", "cuFuncSetAttribute",
                 "cuLaunchKernel", "cuCtxGetCurrent", "cuGetErrorName", "cuGetErrorString"):
        getattr(lib, name).restype = CUresult


def driver():
    """The loaded libcuda, or a CudaDriverError saying why there is none."""
    global _driver
    with _lock:
        if _driver is None:
            try:
                lib = ctypes.CDLL("libcuda.so.1")
            except OSError as exc:
                raise CudaDriverError(
                    f"the fast-path kernels need the NVIDIA driver (libcuda.so.1): {exc}") from None
            _declare(lib)
            _driver = lib
        return _driver


def describe(result: int) -> str:
    lib = driver()
    name, text = ctypes.c_char_p(), ctypes.c_char_p()
    lib.cuGetErrorName(result, ctypes.byref(name))
    lib.cuGetErrorString(result, ctypes.byref(text))
    return f"{(name.value or b'CUDA_ERROR').decode()}: {(text.value or b'unknown error').decode()}"


def check(result: int, what: str) -> None:
    if result != 0:
        raise CudaDriverError(f"{what} failed: {describe(result)}")


def current_context() -> int:
    context = ctypes.c_void_p()
    check(driver().cuCtxGetCurrent(ctypes.byref(context)), "cuCtxGetCurrent")
    return context.value or 0
