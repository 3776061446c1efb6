"""Inputs for timed calls that no cache can recognise.

A candidate may remember its output by the input's ``data_ptr()``, ``id()`` or content and
return it on the next call. Every variant therefore draws its timed calls from a few input
sets of its own (distinct seeds, distinct buffers), and a set that comes round again has its
floating-point tensors rescaled in place first: same buffers and objects, new content. A cache
keyed on identity then returns a stale answer, which the output checks during timing catch; a
cache keyed on content never hits.

The rescaling is a fresh random factor times a fixed pattern that varies from element to
element. A factor alone would scale every input alike, and a task that starts linearly (x * s +
y) would then have an answer that is the last one's with a scalar inside (sigmoid(F * z)): a
candidate kept a compact copy of z, read the factor off one element and skipped reading its
inputs (an outside round, 2026-12-05). With the pattern, each element changes by its own amount
and no answer follows from the last without reading everything again.

Factor and pattern stay in [0.75, 1) and [0.95, 1): they keep signs and ranges such as [0, 1],
so the task's inputs stay valid for the reference.
"""

import random

from .. import models, values

_MAX_SETS = 4
# Elements of the rescaling pattern, repeated along a tensor: enough that no two neighbours
# share a value, small enough to cost nothing to hold.
_PATTERN = 4096


def _pattern(device: str, seed: int):
    """The per-element part of the rescaling, the same in the candidate's pool and the judge's
    copy of it (knowing it does not help: the next input is still a new value at every element)."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    return (0.95 + 0.05 * torch.rand(_PATTERN, generator=generator)).to(device)


def _rescale(t, pattern, scale: float) -> None:
    """``t *= scale * pattern`` with the pattern repeated along t's elements."""
    flat = t.view(-1) if t.is_contiguous() else None
    if flat is None or t.is_complex():
        t.mul_(scale)  # a strided or complex input: the factor alone
        return
    weights = pattern.to(dtype=t.dtype) * scale
    whole = flat.numel() // _PATTERN * _PATTERN
    if whole:
        flat[:whole].view(-1, _PATTERN).mul_(weights)
    if whole < flat.numel():
        flat[whole:].mul_(weights[:flat.numel() - whole])


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
                for t in values.tensors(inputs):
                    if t.is_floating_point() or t.is_complex():
                        _rescale(t, self._pattern, scale)
        self._uses[index] += 1
        return inputs
