"""Seeding, copying and describing the nested values that tasks pass around."""

import random
import sys


def seed_all(seed: int) -> None:
    import torch

    random.seed(seed)
    # Seeds the CPU generator and every CUDA device's generator.
    torch.manual_seed(seed)
    # Only seeded when a task already imported it: importing numpy just for this would
    # cost every stage time and fails where numpy is absent.
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        try:
            numpy.random.seed(seed % (2**32))
        except Exception:
            pass


def map_tensors(value, fn):
    import torch

    if isinstance(value, torch.Tensor):
        return fn(value)
    if isinstance(value, list):
        return [map_tensors(v, fn) for v in value]
    if isinstance(value, tuple):
        mapped = [map_tensors(v, fn) for v in value]
        # namedtuples are rebuilt with their own type; plain tuples stay tuples.
        return type(value)(*mapped) if hasattr(value, "_fields") else tuple(mapped)
    if isinstance(value, dict):
        return {k: map_tensors(v, fn) for k, v in value.items()}
    return value


def flatten(value) -> list:
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in flatten(v)]
    if isinstance(value, dict):
        return [leaf for k in sorted(value, key=repr) for leaf in flatten(value[k])]
    return [value]


def tensors(value) -> list:
    """The tensors among the leaves of ``value``, in :func:`flatten`'s order."""
    import torch

    return [t for t in flatten(value) if isinstance(t, torch.Tensor)]


def set_bytes(inputs) -> int:
    """The bytes held by the tensors of an input set (or of any nested value)."""
    return sum(t.numel() * t.element_size() for t in tensors(inputs))


def to_device(value, device: str):
    return map_tensors(value, lambda t: t.to(device))


def clone(value):
    return map_tensors(value, lambda t: t.detach().clone())


def dtype_name(dtype) -> str:
    return str(dtype).replace("torch.", "")


def describe(value) -> dict:
    """A JSON description of one argument or output for the task overview."""
    import torch

    if isinstance(value, torch.Tensor):
        return {"type": "tensor", "shape": list(value.shape), "dtype": dtype_name(value.dtype)}
    if isinstance(value, bool):
        return {"type": "bool", "value": value}
    if isinstance(value, int):
        return {"type": "int", "value": value}
    if isinstance(value, float):
        return {"type": "float", "value": value}
    if isinstance(value, str):
        return {"type": "str", "value": value}
    if value is None:
        return {"type": "none", "value": None}
    if isinstance(value, (list, tuple)):
        return {
            "type": "tuple" if isinstance(value, tuple) else "list",
            "items": [describe(v) for v in value],
        }
    if isinstance(value, torch.dtype):
        return {"type": "dtype", "value": dtype_name(value)}
    text = repr(value)
    return {"type": type(value).__name__, "value": text if len(text) <= 200 else text[:200] + "..."}
