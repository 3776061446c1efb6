"""Whether inspect's description of a reference would come out the same with any other seed.

The engine keeps a description under the request's seed (engine/evaluation/reference_descriptions.h),
but RL rollouts and KernelBench pairs draw a fresh seed per evaluation: only a description known
not to depend on the seed serves them. For nearly every task it does not: the shapes are module
constants and only the values, which are not described, are random.

Found out without running the reference again. The inputs and initial inputs are drawn a second
time with another seed, torch's meta device the default, so that nothing is allocated; they are
independent only when that draw worked, gave meta tensors alone, drew nothing from any global
generator (Python's ``random``, numpy's, torch's: on the meta device torch's own factories draw
nothing, so whatever did was reached by the seed) and was described exactly as the real draw was.
A draw that raises there (it reads a value: ``.item()``, numpy) or names a device says "depends":
a wrong "depends" costs a GPU run of the reference, a wrong "independent" a wrong description.

The parameters and outputs follow from the model's construction and the inputs' shapes, except
where the construction or the forward pass draws from Python's or numpy's generator (watched
here, for free) or where a shape follows from values: a structure chosen by torch's generator
(which every parameter initialisation draws from, for values only) or an output sized by its
data (``nonzero``, ``unique``, boolean masks). Those two are not watched, since that would take
running the reference again or a dispatch mode around its run; the evaluator reads none of
inspect's outputs and parameters, only the inputs (through the source checks) and the flags.
"""

import random
import sys

from .. import values


def other_seed(seed: int) -> int:
    # The real draw seeds the initial inputs with `seed` and the inputs with `seed + 1`; these
    # two seeds, and numpy's (modulo 2**32), are other than both.
    return seed + 2


def _global_generators(with_torch: bool = True) -> tuple:
    """Every global generator's state, comparable with ==."""
    states = [random.getstate()]
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        try:
            kind, keys, position, has_gauss, gauss = numpy.random.get_state()
            states.append((kind, keys.tobytes(), position, has_gauss, gauss))
        except Exception:  # noqa: BLE001 - unreadable: equal to nothing, so "depends"
            states.append(object())
    if with_torch:
        import torch

        states.append(bytes(torch.get_rng_state().tolist()))
        if torch.cuda.is_initialized():
            states.extend(bytes(s.tolist()) for s in torch.cuda.get_rng_state_all())
    return tuple(states)


def _drawn_on_meta(draw, seed: int):
    """The descriptions of ``draw()`` seeded with ``seed`` on the meta device, or None where it
    raised, gave a tensor elsewhere or drew from a global generator."""
    import torch

    try:
        values.seed_all(seed)
        before = _global_generators()
        with torch.device("meta"):
            drawn = list(draw())
        if _global_generators() != before:
            return None
        if any(t.device.type != "meta" for t in values.tensors(drawn)):
            return None
        return [values.describe(v) for v in drawn]
    except Exception:  # noqa: BLE001 - any failure only means "depends"
        return None


def inputs_independent(task, seed: int, init_inputs: list, inputs: list) -> bool:
    """Whether the described ``init_inputs`` and ``inputs``, drawn with ``seed``, come out the
    same with another seed. Runs the task's own input functions only; call it after the real
    draws, which it leaves as they were (nothing of them is reused or changed)."""
    seed = other_seed(seed)
    # Seeded as models.init_inputs and models.make_inputs seed them.
    return (_drawn_on_meta(task.get_init_inputs, seed) == init_inputs
            and _drawn_on_meta(task.get_inputs, seed + 1) == inputs)


class GeneratorWatch:
    """Whether a step (the model's construction, its forward pass) draws from Python's or numpy's
    generator, which could make its structure or its outputs' shapes follow the seed. Torch's is
    left out: every parameter initialisation draws from it, for values only."""

    def __init__(self, seed: int | None = None):
        # With a seed: the state as values.seed_all(seed) leaves it, for a step that seeds
        # itself first (models.reference_model).
        if seed is not None:
            values.seed_all(seed)
        self._before = _global_generators(with_torch=False)

    def untouched(self) -> bool:
        return _global_generators(with_torch=False) == self._before
