"""Large GPU values from the candidate's process to the judge without leaving the GPU.

Through the sealed memory file (shared_values.py) a GPU output crosses twice over PCIe: the
candidate's process copies it to host memory, the judge copies it back to the GPU. For a 64 MiB
output that is 60-70 ms, and the fast path fetches 15-20 outputs per evaluation: on the H200
more than half of an evaluation's wall time. Here the sender names the device memory instead:
an IPC handle of the allocation that holds each tensor, the tensor's offset in it and its size.
The judge maps the allocation, copies the bytes into memory of its own (device to device), and
unmaps it before it looks at them. From then on the judge works on its copy, as it does with the
memory file's bytes: the digest the candidate committed to is checked on that copy, so a change
the candidate makes to its memory while or after the judge copies shows as a changed output.

What the sender says is checked by the driver, not believed: the handle must open, and the size
of the allocation it opens (the driver's answer) must hold the offset and size announced. Any
failure while importing is the sender's fault and reported as such: the judge's process uses
this path only once a probe of its own (``probe_value``) came through it whole, so an honest
candidate never fails here.

The driver is called through ctypes (libcuda, already loaded by torch): torch's own sharing of
CUDA tensors (torch.multiprocessing) needs a pickled storage and a reference-count file in
/dev/shm named by the sender, neither of which the judge should take from the candidate.
"""

import ctypes

_HANDLE_BYTES = 64
_LAZY_ENABLE_PEER_ACCESS = 1


class CudaIpcError(ValueError):
    pass


class _Handle(ctypes.Structure):
    # Bytes, not c_char: a c_char array reads back only up to its first zero byte.
    _fields_ = [("reserved", ctypes.c_ubyte * _HANDLE_BYTES)]


_driver = None


def _cuda():
    global _driver
    if _driver is None:
        lib = ctypes.CDLL("libcuda.so.1")
        pointer = ctypes.POINTER(ctypes.c_uint64)
        lib.cuMemGetAddressRange_v2.argtypes = [pointer, ctypes.POINTER(ctypes.c_size_t), ctypes.c_uint64]
        lib.cuIpcGetMemHandle.argtypes = [ctypes.POINTER(_Handle), ctypes.c_uint64]
        lib.cuIpcOpenMemHandle_v2.argtypes = [pointer, _Handle, ctypes.c_uint]
        lib.cuIpcCloseMemHandle.argtypes = [ctypes.c_uint64]
        lib.cuMemcpyDtoD_v2.argtypes = [ctypes.c_uint64, ctypes.c_uint64, ctypes.c_size_t]
        lib.cuCtxSynchronize.argtypes = []
        _driver = lib
    return _driver


def _check(result: int, what: str) -> None:
    if result != 0:
        raise CudaIpcError(f"{what} failed (CUDA error {result})")


def _allocation(pointer: int) -> tuple:
    """(base, size) of the device allocation holding ``pointer``."""
    base, size = ctypes.c_uint64(), ctypes.c_size_t()
    _check(_cuda().cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(size), pointer),
           "cuMemGetAddressRange")
    return base.value, size.value


def export(tensors: list, sizes: list):
    """Entries naming each contiguous CUDA tensor's bytes by the IPC handle of its allocation, or
    None where one cannot be named (a tensor off the GPU, memory the driver cannot share, such as
    torch's expandable segments): the caller then sends the bytes another way."""
    import torch

    if not tensors or not all(t.is_cuda for t in tensors):
        return None
    try:
        # The outputs were computed on the candidate's streams; the judge copies on its own.
        torch.cuda.synchronize()
        entries = []
        handles = {}
        for tensor, size in zip(tensors, sizes):
            if size == 0:
                entries.append({"bytes": 0})
                continue
            pointer = tensor.data_ptr()
            base, _ = _allocation(pointer)
            if base not in handles:
                handle = _Handle()
                _check(_cuda().cuIpcGetMemHandle(ctypes.byref(handle), base), "cuIpcGetMemHandle")
                handles[base] = bytes(handle.reserved).hex()
            entries.append({"handle": handles[base], "offset": pointer - base, "bytes": size})
        return entries
    except (OSError, AttributeError, RuntimeError, CudaIpcError):
        return None


def _valid_entries(entries, sizes: list) -> list:
    if not isinstance(entries, list) or len(entries) != len(sizes):
        raise CudaIpcError("the GPU value's entries do not match its description")
    for entry, size in zip(entries, sizes):
        if not isinstance(entry, dict) or entry.get("bytes") != size or type(size) is not int:
            raise CudaIpcError("a GPU value entry's size is not the one its description announces")
        if size == 0:
            continue
        handle, offset = entry.get("handle"), entry.get("offset")
        if not isinstance(handle, str) or len(handle) != 2 * _HANDLE_BYTES or type(offset) is not int or offset < 0:
            raise CudaIpcError("a malformed GPU value entry")
        try:
            bytes.fromhex(handle)
        except ValueError:
            raise CudaIpcError("a malformed GPU value handle") from None
    return entries


def receive(entries, sizes: list, device: str) -> list:
    """The announced bytes as flat uint8 tensors in the judge's own memory on ``device``."""
    import torch

    entries = _valid_entries(entries, sizes)
    target = torch.device(device)
    with torch.cuda.device(target):
        torch.cuda.current_stream().synchronize()  # the judge's context is current on this thread
        copies = [torch.empty(size, dtype=torch.uint8, device=target) for size in sizes]
        opened = {}  # handle -> mapped base, each closed below whatever happens
        extents = {}
        try:
            driver = _cuda()
        except OSError as exc:
            raise CudaIpcError(f"the CUDA driver cannot be loaded: {exc}") from None
        try:
            for entry, copy in zip(entries, copies):
                if entry["bytes"] == 0:
                    continue
                handle = entry["handle"]
                if handle not in opened:
                    mapped = ctypes.c_uint64()
                    _check(driver.cuIpcOpenMemHandle_v2(ctypes.byref(mapped), _Handle.from_buffer_copy(bytes.fromhex(handle)),
                                                        _LAZY_ENABLE_PEER_ACCESS), "cuIpcOpenMemHandle")
                    opened[handle] = mapped.value
                    # The driver's size of what was mapped bounds every read of it below.
                    extents[handle] = _allocation(mapped.value)[1]
                if entry["offset"] + entry["bytes"] > extents[handle]:
                    raise CudaIpcError("a GPU value entry reaches past the allocation its handle names")
                _check(driver.cuMemcpyDtoD_v2(copy.data_ptr(), opened[handle] + entry["offset"], entry["bytes"]),
                       "cuMemcpyDtoD")
            _check(driver.cuCtxSynchronize(), "cuCtxSynchronize")
        except OSError as exc:
            raise CudaIpcError(f"the CUDA driver cannot be reached: {exc}") from None
        finally:
            for base in opened.values():
                driver.cuIpcCloseMemHandle(base)
    return copies


def probe_value(seed: int, size: int = 1 << 21):
    """A pattern both sides compute from the judge's seed: the candidate's process sends it, the
    judge compares what arrives. Int32 words, so a byte out of place shows."""
    import torch

    words = torch.arange(size // 4, dtype=torch.int64, device="cuda")
    return ((words * 2654435761 + seed) % (1 << 31)).to(torch.int32)
