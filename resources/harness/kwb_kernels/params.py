"""Turns Python launch arguments into the kernel's parameter buffer.

The types come from the kernel's PTX signature (in the manifest), so a launch is checked the
way a C++ call would be: a wrong count, a CPU tensor, a float for an integer or an integer
that does not fit is refused before anything reaches the GPU, with the parameter named.
"""

import ctypes
import struct

_INTEGER = {"u8": ctypes.c_uint8, "s8": ctypes.c_int8, "b8": ctypes.c_uint8,
            "u16": ctypes.c_uint16, "s16": ctypes.c_int16, "b16": ctypes.c_uint16,
            "u32": ctypes.c_uint32, "s32": ctypes.c_int32, "b32": ctypes.c_uint32,
            "u64": ctypes.c_uint64, "s64": ctypes.c_int64, "b64": ctypes.c_uint64}
_FLOAT = {"f32": ctypes.c_float, "f64": ctypes.c_double}
_POINTER_TYPES = ("u64", "b64", "s64")


def _range(kind: str) -> tuple:
    bits = ctypes.sizeof(_INTEGER[kind]) * 8
    if kind.startswith("s"):
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    # Unsigned and untyped parameters also take negative values of their width (two's
    # complement), as C would after an implicit conversion of an int.
    return -(1 << (bits - 1)), (1 << bits) - 1


def _tensor_pointer(value, where: str, device_index: int) -> ctypes.c_uint64:
    if not value.is_cuda:
        raise TypeError(f"{where}: a {value.device} tensor was given; kernels need CUDA tensors")
    if value.get_device() != device_index:
        raise TypeError(f"{where}: the tensor is on cuda:{value.device.index} but the launch runs on "
                        f"cuda:{device_index}")
    return ctypes.c_uint64(value.data_ptr())


def convert(value, param: dict, where: str, device_index: int):
    """One argument as a ctypes object holding its bytes."""
    import torch

    kind = param["type"]
    size = param.get("size")
    if size is not None and kind == "b8" and size > 1:
        if not isinstance(value, (bytes, bytearray, memoryview)) or len(value) != size:
            raise TypeError(f"{where}: a by-value struct of {size} bytes needs a bytes object of that size")
        return (ctypes.c_uint8 * size).from_buffer_copy(bytes(value))
    if isinstance(value, torch.Tensor):
        if kind not in _POINTER_TYPES:
            raise TypeError(f"{where}: a tensor was given for a {kind} parameter (pointers are 64-bit)")
        return _tensor_pointer(value, where, device_index)
    if value is None:
        if kind not in _POINTER_TYPES:
            raise TypeError(f"{where}: None (a null pointer) was given for a {kind} parameter")
        return ctypes.c_uint64(0)
    if isinstance(value, bool):
        value = int(value)
    if kind in _FLOAT:
        if not isinstance(value, (int, float)):
            raise TypeError(f"{where}: expected a number for {kind}, got {type(value).__name__}")
        return _FLOAT[kind](float(value))
    if kind == "f16":
        if not isinstance(value, (int, float)):
            raise TypeError(f"{where}: expected a number for f16, got {type(value).__name__}")
        return ctypes.c_uint16(struct.unpack("<H", struct.pack("<e", float(value)))[0])
    if kind in _INTEGER:
        if not isinstance(value, int):
            raise TypeError(f"{where}: expected an int for {kind}, got {type(value).__name__}"
                            + (" (floats are not truncated silently)" if isinstance(value, float) else ""))
        low, high = _range(kind)
        if not low <= value <= high:
            raise TypeError(f"{where}: {value} does not fit a {kind} parameter")
        return _INTEGER[kind](value)
    raise TypeError(f"{where}: unsupported parameter type {kind}")


def pack(kernel: dict, args: tuple, device_index: int):
    """(pointer array for cuLaunchKernel, the objects it points into; keep both alive)."""
    params = kernel["params"]
    if len(args) != len(params):
        raise TypeError(f"kernel {kernel['name']} takes {len(params)} argument(s), {len(args)} given")
    holders = [convert(value, param, f"kernel {kernel['name']}, argument {index}", device_index)
               for index, (value, param) in enumerate(zip(args, params))]
    pointers = (ctypes.c_void_p * max(1, len(holders)))(*[ctypes.addressof(h) for h in holders])
    return pointers, holders


def dims(value, what: str) -> tuple:
    """A grid or block as (x, y, z): an int or a tuple of one to three positive ints."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value,)
    if not isinstance(value, (tuple, list)) or not 1 <= len(value) <= 3:
        raise TypeError(f"{what} must be an int or a tuple of 1 to 3 ints, got {value!r}")
    out = []
    for v in value:
        if not isinstance(v, int) or isinstance(v, bool) or v < 1 or v > 0x7FFFFFFF:
            raise ValueError(f"{what} dimensions must be positive ints, got {value!r}")
        out.append(v)
    while len(out) < 3:
        out.append(1)
    return tuple(out)
