"""Fills memory the process has freed but may hand out again with a poison pattern.

torch's caching allocator (and, on the CPU, malloc) gives a new tensor the block that a
previous one freed, contents included. A candidate that returns ``torch.empty_like(x)`` right
after the reference ran can therefore "compute" the reference's answer for free, and a kernel
that reads memory it never wrote sees plausible values. Before each candidate run the free
blocks are filled with 0xFF bytes: NaN for every floating dtype, -1 for integers.
"""

POISON_BYTE = 0xFF


def _free_cuda_blocks() -> list:
    import torch

    sizes = []
    try:
        # Traces are irrelevant here and can be large.
        segments = torch.cuda.memory_snapshot(include_traces=False)
    except TypeError:
        segments = torch.cuda.memory_snapshot()
    for segment in segments:
        for block in segment.get("blocks", []):
            if block.get("state") == "inactive" and block.get("size", 0) > 0:
                sizes.append(int(block["size"]))
    return sorted(sizes, reverse=True)


def poison_free_memory(device: str, recent_sizes: list) -> int:
    """Poisons the allocator's free blocks (CUDA) or blocks of ``recent_sizes`` bytes (CPU,
    where malloc reuses same-sized chunks). Returns the number of bytes written."""
    import torch

    sizes = _free_cuda_blocks() if device == "cuda" else sorted((s for s in recent_sizes if s > 0), reverse=True)
    held = []
    written = 0
    try:
        for size in sizes:
            try:
                block = torch.empty(size, dtype=torch.uint8, device=device)
            except RuntimeError:
                break  # out of memory: what was poisoned so far still counts
            block.fill_(POISON_BYTE)
            held.append(block)
            written += size
        if device == "cuda":
            torch.cuda.synchronize()
    finally:
        # Freed again, poison inside: the next allocation of these sizes starts out as NaN.
        del held
    return written


def tensor_bytes(value) -> list:
    from ..values import flatten

    import torch

    return [t.numel() * t.element_size() for t in flatten(value) if isinstance(t, torch.Tensor)]
