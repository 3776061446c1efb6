"""A commitment to a call's output, sent with the batch's reply, checked when the output is fetched.

The judge picks the calls whose outputs it compares only after a batch has replied. Without a
commitment, a candidate could compute half of every output inside the timed calls and repair
only the outputs the judge fetches, inside the fetch, where no clock or guard looks. With it,
the reply carries a digest of every output as it stood at the reply, and a fetched output must
match its digest: any repair has to happen before the reply, inside the judge's clock around
the batch and, on the GPU, inside the profiled calls.

The digest mixes every 64-bit word of the output's bytes through a keyed multiply-xorshift and
adds the results with wrap-around. The sum does not depend on the order of reduction, so torch's
reductions give the same bits on every device and thread count, and the judge's copy of an
output (decoded from the wire) digests to what the candidate's process sent. The key is fresh per
batch. It is not a cryptographic hash: it binds the candidate to the bytes it had computed, which
is the point, and costs a few passes over the output (calibrated by the judge, like the timer's
own cost, so that honest batches are not charged for it).
"""

import hashlib
import json
import secrets

from ..errors import OUTPUT_MISMATCH, HarnessError

_MIX = 0x9E3779B97F4A7C15 - (1 << 64)  # the golden-ratio constant, as a signed 64-bit value


def new_key() -> int:
    """An odd 63-bit multiplier, fresh for every batch."""
    return secrets.randbits(62) * 2 + 1


def _words(tensor):
    """The tensor's bytes as 64-bit words, with the tail (under 8 bytes) as separate bytes."""
    import torch

    flat = tensor.detach().contiguous().reshape(-1)
    if flat.dtype == torch.bool:
        flat = flat.view(torch.uint8)
    raw = flat.view(torch.uint8) if flat.numel() else flat.new_empty(0, dtype=torch.uint8)
    if raw.storage_offset() % 8:  # a slice of a larger buffer: its words must start aligned
        raw = raw.clone()
    whole = raw.numel() // 8 * 8
    return raw[:whole].view(torch.int64), raw[whole:].tolist()


# Words mixed per pass: the scratch buffers (two per device, kept between calls) stay at 32 MiB
# each whatever the output's size. Fresh buffers for every output would cost more than the
# mixing itself: the first touch of every page of a large allocation.
_CHUNK_WORDS = 1 << 22
_scratch = {}


def _buffers(words):
    import torch

    held = _scratch.get(words.device)
    if held is None:
        held = (torch.empty(_CHUNK_WORDS, dtype=torch.int64, device=words.device),
                torch.empty(_CHUNK_WORDS, dtype=torch.int64, device=words.device))
        _scratch[words.device] = held
    return held


def _lane(words, key: int) -> int:
    import torch

    total = 0
    if words.numel() == 0:
        return total
    mixed_all, shifted_all = _buffers(words)
    for start in range(0, words.numel(), _CHUNK_WORDS):
        chunk = words[start:start + _CHUNK_WORDS]
        mixed, shifted = mixed_all[:chunk.numel()], shifted_all[:chunk.numel()]
        torch.mul(chunk, key, out=mixed)
        # Shifting a signed word right copies its sign: a fixed, nonlinear step, the same on
        # every device.
        torch.bitwise_right_shift(mixed, 29, out=shifted)
        mixed.bitwise_xor_(shifted)
        mixed.mul_(_MIX)
        total += int(mixed.sum().item())
    return total & ((1 << 64) - 1)


def digest(value, key: int) -> str:
    """The commitment to ``value`` (any nested output) under ``key``, as hex text."""
    import torch

    from ..values import flatten

    summary = hashlib.blake2b(digest_size=16)
    summary.update(str(key).encode())
    for leaf in flatten(value):
        if isinstance(leaf, torch.Tensor):
            # The bytes first, before anything else the host calls (json here) could be made to
            # finish the output off the clock.
            words, tail = _words(leaf)
            lane = _lane(words, key)
            header = {"dtype": str(leaf.dtype), "shape": list(leaf.shape), "tail": tail}
            summary.update(json.dumps(header).encode() + lane.to_bytes(8, "little"))
        else:
            summary.update(repr((type(leaf).__name__, leaf)).encode("utf-8", "replace"))
    return summary.hexdigest()


def checked_digests(reply: dict, count: int) -> list | None:
    """The reply's digests, when there is one well-formed text per call; None otherwise."""
    found = reply.get("digests")
    if not isinstance(found, list) or len(found) != count or not all(
            isinstance(d, str) and len(d) == 32 for d in found):
        return None
    return found


def committed_digests(reply: dict, count: int) -> list:
    """The reply's digests; a reply without one per call fails the run (the candidate's side
    of the protocol is its to keep)."""
    digests = checked_digests(reply, count)
    if digests is None:
        raise HarnessError(OUTPUT_MISMATCH, "the candidate's process did not commit to its outputs "
                                            "(no digest per call in its reply)")
    return digests


def changed_flag(index: int) -> dict:
    return {"code": "output_changed_after_reply", "severity": "strict",
            "reason": f"the output of call {index} that the judge fetched is not the output the candidate's "
                      "process committed to when the batch replied: outputs were changed (repaired?) after "
                      "the timed calls"}


def first_changed(outputs: list, indices: list, digests: list, key: int) -> int | None:
    """The first of the fetched ``outputs`` (of calls ``indices``) whose digest is not the one
    committed to, or None."""
    for index, output in zip(indices, outputs):
        if digest(output, key) != digests[index]:
            return index
    return None
