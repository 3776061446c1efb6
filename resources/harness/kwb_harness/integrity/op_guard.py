"""Records which ATen operators a candidate's forward pass runs, at the dispatcher.

A TorchDispatchMode sees every operator that reaches the dispatcher while it is active: calls
through ``torch.*``, Tensor methods, ``torch.ops.aten``, names bound before the guard existed,
and ATen calls made from C++ inside an extension. Patching module attributes would miss most of
these. Creating, viewing, copying and describing tensors is allowed; anything else computes, and
a candidate that computes with torch instead of its own kernels earns a ``torch_fallback`` flag.
"""

import collections

# Operators that allocate, reshape, copy or describe tensors without computing on their values.
ALLOWED = frozenset("""
    empty empty_like empty_strided new_empty new_empty_strided zeros zeros_like ones ones_like
    full full_like new_zeros new_ones new_full fill zero arange scalar_tensor lift_fresh
    view _unsafe_view reshape _reshape_alias view_as permute transpose t expand expand_as squeeze
    unsqueeze flatten unflatten slice select narrow split split_with_sizes chunk unbind as_strided
    alias detach clone contiguous copy _to_copy to _copy_from _copy_from_and_resize resize
    set is_contiguous stride size sym_size sym_stride sym_numel sym_storage_offset numel dim
    _local_scalar_dense record_stream is_pinned _has_compatible_shallow_copy_type
""".split())


def _base_name(func) -> str:
    # aten.relu_.default -> "relu"; in-place and out= variants count as their functional op.
    name = func.overloadpacket.__name__ if hasattr(func, "overloadpacket") else str(func)
    return name.rstrip("_") if name.endswith("_") and not name.startswith("_") else name


def make_guard():
    """A context manager whose ``compute_ops`` counts the non-allowed operators it saw."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class OpGuard(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.compute_ops = collections.Counter()
            self.allowed_ops = collections.Counter()

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            name = _base_name(func)
            if name in ALLOWED:
                self.allowed_ops[name] += 1
            else:
                self.compute_ops["aten." + name] += 1
            return func(*args, **(kwargs or {}))

    return OpGuard()


def warm_up() -> None:
    """Pays what a dispatch mode's first use costs (it imports torch._dynamo and sympy: 1-4 s)
    on a tiny CPU tensor, so that it is not paid inside the candidate's first checked call."""
    import torch

    with make_guard():
        (torch.ones(4) * 2).sum()


def fallback_flag(guard) -> dict | None:
    """The strict flag for a candidate that computed with torch operators, or None."""
    if not guard.compute_ops:
        return None
    listed = ", ".join(f"{name} (x{count})" if count > 1 else name
                       for name, count in guard.compute_ops.most_common(8))
    more = len(guard.compute_ops) - 8
    return {
        "code": "torch_fallback",
        "severity": "strict",
        "reason": "ModelNew.forward computes with torch operators instead of its own kernels: "
                  + listed + (f" and {more} more" if more > 0 else ""),
    }
