"""Large values between the candidate's process and the judge, through a sealed memory file.

Sent over the stream socket, a value's bytes cost two copies through the kernel in chunks of the
socket's buffer (a few hundred KiB), each a wake-up of the other side: 64 MiB took 0.3 s on a
two-core machine, and the fast evaluation path fetches several such outputs per check and per
timing round. Above ``SHARED_MIN_BYTES`` the sender writes the bytes once into an anonymous
memory file (``memfd_create``), seals it against writing and resizing, and passes its descriptor
with the frame; the receiver maps it privately and reads the bytes in place.

The seals are what make the mapping safe for the judge: no process, the sender included, can
change the bytes after the judge has checked them against the digest the candidate committed
to, or shrink the file under the mapping (a SIGBUS in the judge). A descriptor that is not a
memory file, or one without those seals, is refused.
"""

import fcntl
import mmap
import os


class SharedValueError(ValueError):
    pass


# Below this the socket is as fast, and a memory file per message would cost more than it saves.
SHARED_MIN_BYTES = 1 << 20

_SEALS = fcntl.F_SEAL_WRITE | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW


def write(tensors: list, sizes: list):
    """A sealed memory file holding the tensors' bytes back to back (``sizes`` each), or None
    where one cannot be made (no memfd, the file size limit, no memory): the caller then streams
    them."""
    import torch

    from .wire_values import byte_view

    total = sum(sizes)
    try:
        fd = os.memfd_create("kwb-value", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    except (AttributeError, OSError):
        return None
    try:
        os.ftruncate(fd, total)
        mapped = mmap.mmap(fd, total)
        try:
            offset = 0
            for tensor, size in zip(tensors, sizes):
                if size:
                    # Straight from the tensor's device into the file: one copy, also for a GPU
                    # output.
                    destination = torch.frombuffer(mapped, dtype=torch.uint8, count=size, offset=offset)
                    destination.copy_(byte_view(tensor))
                    del destination
                offset += size
        finally:
            mapped.close()
        # Only once no writable mapping is left can the file be sealed against writing.
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, _SEALS | fcntl.F_SEAL_SEAL)
        return fd
    except (OSError, RuntimeError, BufferError, ValueError):
        os.close(fd)
        return None


def read(fd: int, sizes: list) -> list:
    """Buffers of ``sizes`` bytes each, in place in the sealed memory file ``fd`` (a private,
    copy-on-write mapping: torch may treat the buffers as writable without touching the file)."""
    try:
        seals = fcntl.fcntl(fd, fcntl.F_GET_SEALS)
    except OSError:
        raise SharedValueError("the value's descriptor is not a memory file") from None
    if seals & _SEALS != _SEALS:
        raise SharedValueError("the value's memory file is not sealed against writing and resizing")
    total = sum(sizes)
    if os.fstat(fd).st_size < total:
        raise SharedValueError("the value's memory file is smaller than the value it announces")
    if total == 0:
        return [bytearray() for _ in sizes]
    try:
        mapped = mmap.mmap(fd, total, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_WRITE)
    except OSError as exc:
        raise SharedValueError(f"the value's memory file cannot be mapped: {exc}") from None
    view = memoryview(mapped)
    buffers = []
    offset = 0
    for size in sizes:
        buffers.append(view[offset:offset + size])
        offset += size
    return buffers
