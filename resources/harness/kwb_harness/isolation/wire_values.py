"""Outputs and inputs as they cross between the candidate's process and the judge.

A value becomes a JSON description plus a list of raw tensor buffers: tensors by dtype, shape
and byte count, numbers and strings as themselves, lists, tuples and dicts (string keys) as
such. Nothing is unpickled on the judge's side, so nothing the candidate sends can run code
there or compute lazily on access; the judge rebuilds plain tensors from the bytes. A tensor
subclass or any other object is described by its type name only, which the judge reports.
"""


_MAX_DEPTH = 32
_MAX_NODES = 100_000


class WireError(ValueError):
    pass


def _dtype(name):
    import torch

    dtype = getattr(torch, name, None) if isinstance(name, str) and name.isidentifier() else None
    if not isinstance(dtype, torch.dtype):
        raise WireError(f"unknown dtype {name!r}")
    return dtype


def encode(value) -> tuple:
    """(description, tensors): tensors detached and contiguous, still on their devices (the
    channel copies each to where it goes once), in the description's order."""
    import torch

    tensors = []

    def walk(v, depth):
        if depth > _MAX_DEPTH:
            raise WireError("value nested too deeply")
        if isinstance(v, torch.Tensor):
            if type(v) is not torch.Tensor:
                return {"object": f"{type(v).__module__}.{type(v).__qualname__}"}
            t = v.detach()
            if t.is_sparse or t.layout != torch.strided:
                return {"object": f"torch.Tensor with layout {t.layout}"}
            t = t.contiguous()
            tensors.append(t)
            return {"tensor": len(tensors) - 1, "dtype": str(t.dtype).replace("torch.", ""),
                    "shape": list(t.shape), "device": v.device.type}
        if v is None or isinstance(v, (bool, int, float, str)):
            return {"value": v}
        if isinstance(v, (list, tuple)):
            return {"list" if isinstance(v, list) else "tuple": [walk(x, depth + 1) for x in v]}
        if isinstance(v, dict) and all(isinstance(k, str) for k in v):
            return {"dict": {k: walk(x, depth + 1) for k, x in v.items()}}
        return {"object": f"{type(v).__module__}.{type(v).__qualname__}"}

    try:
        return walk(value, 0), tensors
    finally:
        del walk  # a recursive closure is a reference cycle: it would keep the tensors until a gc


def byte_count(t) -> int:
    return t.numel() * t.element_size()


def byte_view(t):
    """A contiguous tensor's bytes as a flat uint8 tensor on its device (no copy)."""
    import torch

    return t.reshape(-1).view(torch.uint8)


def tensor_buffer(t):
    """A zero-copy view of a contiguous CPU tensor's bytes, for ``socket.sendall``. The view
    holds the tensor (through numpy's array of it): a temporary such as a GPU output's host copy
    would otherwise be freed under the view, and the next copy of the same size, taking the
    same memory, would show through every earlier view (on the H100 every output a fetch sent
    through the socket carried the last one's bytes)."""
    if byte_count(t) == 0:
        return b""
    return memoryview(byte_view(t).numpy())


def tensor_sizes(description) -> list:
    """The byte count of each tensor a description announces, in order; checks the shape."""
    import torch

    sizes = {}
    nodes = 0

    def walk(d, depth):
        nonlocal nodes
        nodes += 1
        if depth > _MAX_DEPTH or nodes > _MAX_NODES or not isinstance(d, dict) or len(d) == 0:
            raise WireError("malformed value description")
        if "tensor" in d:
            index, shape = d.get("tensor"), d.get("shape")
            if not isinstance(index, int) or index < 0 or index in sizes or not isinstance(shape, list):
                raise WireError("malformed tensor description")
            if not all(isinstance(n, int) and not isinstance(n, bool) and 0 <= n < (1 << 40) for n in shape):
                raise WireError("malformed tensor shape")
            count = 1
            for n in shape:
                count *= n
            sizes[index] = count * torch.empty((), dtype=_dtype(d.get("dtype"))).element_size()
        elif "list" in d or "tuple" in d:
            items = d.get("list", d.get("tuple"))
            if not isinstance(items, list):
                raise WireError("malformed list description")
            for item in items:
                walk(item, depth + 1)
        elif "dict" in d:
            if not isinstance(d["dict"], dict):
                raise WireError("malformed dict description")
            for item in d["dict"].values():
                walk(item, depth + 1)
        elif "value" not in d and "object" not in d:
            raise WireError("malformed value description")

    try:
        walk(description, 0)
    finally:
        del walk
    if sorted(sizes) != list(range(len(sizes))):
        raise WireError("tensor indices are not 0..n-1")
    return [sizes[i] for i in range(len(sizes))]


class Foreign:
    """Stands for an object the candidate returned that is not a plain value or tensor."""

    def __init__(self, type_name: str):
        self.type_name = type_name

    def __repr__(self) -> str:
        return f"<{self.type_name}>"


def decode(description, buffers: list, device: str | None = None):
    """Rebuilds the value; tensors from the raw ``buffers`` (already size-checked): bytes, or
    flat uint8 tensors already on the judge's device (cuda_ipc.py)."""
    import torch

    def walk(d):
        if "tensor" in d:
            dtype = _dtype(d["dtype"])
            buffer = buffers[d["tensor"]]
            if isinstance(buffer, torch.Tensor):  # bytes already copied to the device
                t = buffer.view(dtype).reshape(d["shape"]) if buffer.numel() else \
                    torch.empty(d["shape"], dtype=dtype, device=buffer.device)
            elif len(buffer) == 0:
                t = torch.empty(d["shape"], dtype=dtype)
            else:
                t = torch.frombuffer(buffer, dtype=dtype).reshape(d["shape"])
            return t.to(device) if device else t
        if "value" in d:
            v = d["value"]
            return v if v is None or isinstance(v, (bool, int, float, str)) else Foreign(type(v).__name__)
        if "list" in d:
            return [walk(x) for x in d["list"]]
        if "tuple" in d:
            return tuple(walk(x) for x in d["tuple"])
        if "dict" in d:
            return {k: walk(x) for k, x in d["dict"].items()}
        return Foreign(str(d.get("object"))[:200])

    try:
        return walk(description)
    finally:
        del walk  # the cycle would keep every received buffer (a mapped output) until a gc
