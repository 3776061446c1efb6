"""Inputs for timed calls that no cache can recognise.

A candidate may remember its output by the input's ``data_ptr()``, ``id()`` or content and
return it on the next call. Every variant therefore draws its timed calls from a few input
sets of its own (distinct seeds, distinct buffers), and a set that comes round again has its
floating-point tensors rescaled in place first: same buffers and objects, new content. A cache
keyed on identity then returns a stale answer, which the output checks during timing catch; a
cache keyed on content never hits.

The rescaling is a fresh random factor times a pattern that varies from element to element, laid
on each tensor from an offset of its own that changes on every reuse. A factor alone would scale
every input alike, and a task that starts linearly (x * s + y) would then have an answer that is
the last one's with a scalar inside (sigmoid(F * z)): a candidate kept a compact copy of z, read
the factor off one element and skipped reading its inputs (an outside round, 2026-12-05). One
pattern laid the same way on every tensor still left z' = (F * w) * z, w learnt from a few
thousand elements (a review, 2026-12-05); with an offset per tensor and per reuse, x and y change
by different amounts at every element, and the next answer needs both of them, read again.

Factor and pattern stay in [0.75, 1) and [0.95, 1): they keep signs and ranges such as [0, 1],
so the task's inputs stay valid for the reference. Structure a task's inputs are made with, which
an honest kernel may rely on, is kept too: a matrix equal to its transpose gets a symmetric
multiplier (a[i] * a[j]), rows sorted along the last dimension one multiplier per row, and a
tensor of one repeated value the factor alone.
"""

import hashlib
import random
import struct

from .. import models, values

_MAX_SETS = 4
# Elements of the rescaling pattern, repeated along a tensor: enough that two tensors' offsets
# rarely coincide, small enough to cost nothing to hold.
_PATTERN = 1 << 16
# Elements rescaled per step for a tensor whose elements are not contiguous (a bounded temporary).
_STRIDED_STEP = 1 << 22


def _pattern(device: str, seed: int):
    """The per-element part of the rescaling, the same in the candidate's pool and the judge's
    copy of it (knowing it does not help: the next input is still a new value at every element)."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    return (0.95 + 0.05 * torch.rand(_PATTERN, generator=generator)).to(device)


def _offset(factor: float, index: int) -> int:
    """Where tensor ``index`` of a set starts in the pattern on the reuse drawn as ``factor``:
    both copies of a pool derive it from what the judge sends, and no earlier reuse predicts it."""
    digest = hashlib.blake2b(struct.pack("<dI", factor, index), digest_size=8).digest()
    return int.from_bytes(digest, "little") % _PATTERN


def _structure(t) -> str:
    """What a fresh input's content keeps that an element-wise multiplier would break. Random
    content fails each test on its first row, so only structured inputs cost a full pass."""
    import torch

    if not (t.is_floating_point() or t.is_complex()):
        return "not rescaled"
    if t.numel() < 2:
        return "scalar"
    flat = t.reshape(-1)
    if bool((flat[:64] == flat[0]).all()) and bool((t == flat[0]).all()):
        return "constant"
    if t.is_complex():
        return "free"
    if t.dim() >= 2 and t.shape[-1] == t.shape[-2]:
        first = t.reshape(-1, t.shape[-1], t.shape[-1])[0]
        if torch.equal(first[0], first[:, 0]) and torch.equal(t, t.transpose(-1, -2)):
            return "symmetric"
    if t.shape[-1] >= 2:
        rows = t.reshape(-1, t.shape[-1])
        if _monotone(rows[:1], ascending=True) and _monotone(rows, ascending=True):
            return "sorted"
        if _monotone(rows[:1], ascending=False) and _monotone(rows, ascending=False):
            return "sorted"
    return "free"


def _monotone(rows, ascending: bool) -> bool:
    steps = rows[:, 1:] >= rows[:, :-1] if ascending else rows[:, 1:] <= rows[:, :-1]
    return bool(steps.all())


def _weights(pattern, offset: int, scale: float, dtype):
    """The pattern from ``offset`` on, times ``scale``, in ``dtype``."""
    import torch

    return torch.roll(pattern, -offset).to(dtype) * scale


def _stretch(weights, start: int, count: int):
    """``count`` elements of the repeated weights, from element ``start`` of the repetition."""
    import torch

    rolled = torch.roll(weights, -(start % _PATTERN))
    return rolled.repeat(-(-count // _PATTERN))[:count]


def _rescale(t, pattern, scale: float, offset: int, structure: str) -> None:
    """``t *= scale * multiplier``: the pattern from ``offset`` along t's elements in order, or
    the multiplier that keeps ``structure``."""
    import torch

    real = t.real.dtype if t.is_complex() else t.dtype
    if structure in ("scalar", "constant"):
        t.mul_(scale)
        return
    if structure == "symmetric":
        side = _stretch(_weights(pattern, offset, 1.0, real), 0, t.shape[-1])
        # a[i] * a[j] * scale as one matrix: products taken in one order stay exactly symmetric.
        t.mul_(torch.outer(side, side) * scale)
        return
    weights = _weights(pattern, offset, scale, real)
    if structure == "sorted":
        rows = t.numel() // t.shape[-1]
        t.mul_(_stretch(weights, 0, rows).view(*t.shape[:-1], 1))
    elif t.is_contiguous():
        flat = t.view(-1)
        whole = flat.numel() // _PATTERN * _PATTERN
        if whole:
            flat[:whole].view(-1, _PATTERN).mul_(weights)
        if whole < flat.numel():
            flat[whole:].mul_(weights[:flat.numel() - whole])
    else:
        # Not contiguous: a block of whole rows at a time, each block's multiplier the pattern's
        # stretch where the block starts in t's element order.
        row = max(1, t.numel() // t.shape[0])
        rows_per_step = max(1, _STRIDED_STEP // row)
        for first in range(0, t.shape[0], rows_per_step):
            block = t[first:first + rows_per_step]
            block.mul_(_stretch(weights, first * row, block.numel()).view(block.shape))


class InputPool:
    @staticmethod
    def seeds(seed: int, salt: int, per_set_bytes: int, budget_bytes: int) -> list:
        """The seeds of a pool's input sets (the warm worker pre-generates them)."""
        count = max(2, min(_MAX_SETS, budget_bytes // max(1, per_set_bytes)))
        return [seed + salt + 7919 * i for i in range(count)]

    def __init__(self, task, seed: int, device: str, workspace: str, budget_bytes: int, salt: int):
        first = models.make_inputs(task, seed + salt, device, workspace)
        seeds = self.seeds(seed, salt, values.set_bytes(first), budget_bytes)
        count = len(seeds)
        self._sets = [first] + [models.make_inputs(task, s, device, workspace) for s in seeds[1:]]
        self._uses = [0] * count
        self._next = 0
        self._pattern = _pattern(device, seed + salt)
        # Decided on the fresh content, which both copies of a pool share.
        self._structures = [[_structure(t) for t in values.tensors(inputs)] for inputs in self._sets]
        # Not seeded from the evaluation seed: the candidate must not be able to predict it.
        self._random = random.Random()

    def __len__(self) -> int:
        return len(self._sets)

    def draw_factor(self) -> float:
        """A rescaling factor for :meth:`next`; the judge draws them for the candidate's pool
        and its own copy of it, so that both hold the same values."""
        return self._random.uniform(0.75, 1.0)

    def next(self, factor: float | None = None) -> list:
        """The next input set; a set that comes round again is rescaled by ``factor`` (drawn
        here when None) first."""
        import torch

        index = self._next % len(self._sets)
        self._next += 1
        inputs = self._sets[index]
        if self._uses[index]:
            scale = self.draw_factor() if factor is None else float(factor)
            with torch.no_grad():
                for position, (t, structure) in enumerate(zip(values.tensors(inputs), self._structures[index])):
                    if t.is_floating_point() or t.is_complex():
                        _rescale(t, self._pattern, scale, _offset(scale, position), structure)
        self._uses[index] += 1
        return inputs
