"""Loads compiled kernel modules and launches their kernels on torch's current stream."""

import collections
import ctypes
import os
import threading

from . import driver as cu
from . import manifest as manifests
from .params import dims, pack

_STATIC_SHARED_LIMIT = 48 * 1024  # above this, dynamic shared memory must be opted into
_configured_directory = None
_counter = None


class LaunchCounter:
    """Counts launches per kernel; the harness uses it as evidence that the kernels ran."""

    def __init__(self):
        self.calls = collections.Counter()

    def total(self) -> int:
        return sum(self.calls.values())


def configure(directory: str | None = None, counter: LaunchCounter | None = None) -> None:
    """Where compiled modules are read from, and who counts launches (the harness sets both)."""
    global _configured_directory, _counter
    _configured_directory = directory
    _counter = counter


def kernels_directory() -> str:
    if _configured_directory:
        return _configured_directory
    if os.environ.get("KWB_KERNELS_DIR"):
        return os.environ["KWB_KERNELS_DIR"]
    return os.path.join(os.getcwd(), "build", "kwb_kernels")


def _current_device_and_stream():
    """(device index, raw stream handle) of torch's current device and stream. A launch is
    often shorter than its Python overhead, so this takes torch's raw accessors when they
    exist instead of building Stream objects."""
    import torch

    raw_device = getattr(torch._C, "_cuda_getDevice", None)
    raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw_device is not None and raw_stream is not None and torch.cuda.is_initialized():
        index = raw_device()
        return index, raw_stream(index)
    if not torch.cuda.is_available():
        raise cu.CudaDriverError("the fast-path kernels need a CUDA GPU; none is available to torch")
    index = torch.cuda.current_device()
    return index, torch.cuda.current_stream(index).cuda_stream


def _ensure_context(device_index: int) -> int:
    context = cu.current_context()
    if not context:
        import torch

        # cudaSetDevice makes the device's primary context (torch's) current on this thread.
        torch.cuda.set_device(device_index)
        context = cu.current_context()
    if not context:
        raise cu.CudaDriverError("no CUDA context is current; torch has not initialised the device")
    return context


class Kernel:
    def __init__(self, module: "KernelModule", entry: dict):
        self._module = module
        self._entry = entry
        self.name = entry["name"]
        self._opted_in = {}  # device index -> dynamic shared bytes already allowed

    @property
    def params(self) -> list:
        return [p["type"] for p in self._entry["params"]]

    def __call__(self, grid, block, args=(), shared_mem: int = 0):
        grid3, block3 = dims(grid, "grid"), dims(block, "block")
        if block3[0] * block3[1] * block3[2] > 1024:
            raise ValueError(f"kernel {self.name}: block {block3} has more than 1024 threads")
        if not isinstance(shared_mem, int) or shared_mem < 0:
            raise ValueError(f"kernel {self.name}: shared_mem must be a non-negative int")
        device_index, stream = _current_device_and_stream()
        function = self._module._function(self._entry["symbol"], device_index)
        if shared_mem > _STATIC_SHARED_LIMIT and self._opted_in.get(device_index, 0) < shared_mem:
            cu.check(cu.driver().cuFuncSetAttribute(
                function, cu.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, shared_mem),
                f"allowing {shared_mem} bytes of dynamic shared memory for {self.name}")
            self._opted_in[device_index] = shared_mem
        pointers, holders = pack(self._entry, tuple(args), device_index)
        result = cu.driver().cuLaunchKernel(function, grid3[0], grid3[1], grid3[2], block3[0], block3[1],
                                            block3[2], shared_mem, stream, pointers, None)
        del holders
        if result != 0:
            cu.check(result, f"launching {self.name} (grid {grid3}, block {block3}, shared {shared_mem} B)")
        if _counter is not None:
            _counter.calls[self.name] += 1

    def __repr__(self) -> str:
        return f"<kwb_kernels kernel {self.name}({', '.join(self.params)})>"


class KernelModule:
    """One ``kernels/<stem>.cu``: its kernels are attributes (``module.my_kernel(...)``)."""

    def __init__(self, stem: str, directory: str):
        self.stem = stem
        self._manifest = manifests.read(directory, stem)
        cubin_path = os.path.join(directory, self._manifest.get("cubin", stem + ".cubin"))
        try:
            with open(cubin_path, "rb") as handle:
                self._image = handle.read()
        except OSError as exc:
            raise manifests.ManifestError(f"cannot read {cubin_path}: {exc}") from None
        self._kernels = {entry["name"]: Kernel(self, entry) for entry in self._manifest["kernels"]}
        self._loaded = {}  # context -> module handle
        self._functions = {}  # (device index, symbol) -> function handle
        self._lock = threading.Lock()

    @property
    def arch(self) -> str:
        return self._manifest.get("arch", "")

    def kernels(self) -> list:
        return sorted(self._kernels)

    def __getattr__(self, name: str) -> Kernel:
        kernels = self.__dict__.get("_kernels", {})
        if name in kernels:
            return kernels[name]
        raise AttributeError(f"kernels/{self.__dict__.get('stem', '?')}.cu has no kernel '{name}' "
                             f"(it has: {', '.join(sorted(kernels)) or 'none'})")

    def _function(self, symbol: str, device_index: int):
        # Modules live in a context; torch uses each device's primary context, so the device
        # index names it. Looked up on every launch, hence the dictionary first.
        function = self._functions.get((device_index, symbol))
        if function is not None:
            return function
        with self._lock:
            context = _ensure_context(device_index)
            handle = self._loaded.get(context)
            if handle is None:
                handle = ctypes.c_void_p()
                image = ctypes.create_string_buffer(self._image, len(self._image))
                cu.check(cu.driver().cuModuleLoadData(ctypes.byref(handle), image),
                         f"loading kernels/{self.stem}.cu (compiled for {self.arch or 'an unknown arch'})")
                self._loaded[context] = handle
            function = ctypes.c_void_p()
            cu.check(cu.driver().cuModuleGetFunction(ctypes.byref(function), handle, symbol.encode()),
                     f"finding {symbol} in kernels/{self.stem}.cu")
            self._functions[(device_index, symbol)] = function
            return function


_modules = {}
_modules_lock = threading.Lock()


def load(stem: str) -> KernelModule:
    """The compiled ``kernels/<stem>.cu`` (``stem`` may also be given as "gelu.cu")."""
    if stem.endswith(".cu"):
        stem = stem[:-3]
    if not stem or "/" in stem or stem.startswith("."):
        raise ValueError(f"'{stem}' is not a kernel file name (use the stem of kernels/NAME.cu)")
    directory = kernels_directory()
    try:
        # A recompiled module is a new module, even within one process.
        stamp = os.stat(os.path.join(directory, stem + ".json")).st_mtime_ns
    except OSError:
        stamp = None
    key = (os.path.abspath(directory), stem, stamp)
    with _modules_lock:
        if key not in _modules:
            _modules[key] = KernelModule(stem, directory)
        return _modules[key]
