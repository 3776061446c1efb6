"""Room in torch's caching allocator for the outputs a timed batch keeps.

The candidate's process keeps every output of a batch until the judge has picked the ones it
checks (the digests commit to all of them first). Kept outputs hold their blocks, so each call
of a batch would ask the allocator for a block it does not have yet and pay cudaMalloc, a
hundred microseconds and more for tens of megabytes, inside the timed call. Eager and
torch.compile drop their outputs and reuse one block, as KernelBench's trials do. On an H200
the kernelbench profile's batch of 100 timed a 50 us add at 0.17 ms this way, against 0.064 ms
for the same extension under KernelBench's method (bench/results/2026-12-03-h200-*.md).

Allocating the batch's blocks once, untimed, and freeing them leaves them cached: the calls
then get blocks as cheaply as the baselines do.
"""


def reserve(device: str, output_bytes: list, calls: int) -> int:
    """Leaves ``calls`` free blocks for each size in ``output_bytes`` (one call's output
    tensors) in the caching allocator. Returns the bytes reserved; fewer when memory runs out,
    which the batch would then meet too."""
    if device != "cuda" or calls < 1 or not any(size > 0 for size in output_bytes):
        return 0
    import torch

    held = []
    try:
        for _ in range(calls):
            for size in output_bytes:
                if size > 0:
                    held.append(torch.empty(size, dtype=torch.uint8, device=device))
    except torch.cuda.OutOfMemoryError:
        pass
    reserved = sum(block.numel() for block in held)
    del held  # back to the allocator's cache, not to the driver
    return reserved
