"""A second input shape, derived from the task's own size parameters.

A candidate verified on a single shape can bake that shape into its kernels. When the task's
``get_inputs()`` reads module-level integers (``batch_size``, ``seq_len``, ...) that the model's
construction does not use, those can change without touching the weights: each becomes
``n // 2 + 1`` (4096 -> 2049, 16 -> 9), odd on purpose so kernels that assume a multiple of a
tile size are exercised too. Batch-like names are tried alone first; the reference must still
run on the new shape, otherwise the task does not allow it and the check is skipped.
"""

import contextlib

from ..errors import HarnessError


def _names_read(fn) -> set:
    code = getattr(fn, "__code__", None)
    return set(code.co_names) if code is not None else set()


def _candidates(task) -> list:
    module = task.module
    init_names = _names_read(task.get_init_inputs)
    names = [
        n for n in sorted(_names_read(task.get_inputs) - init_names)
        if type(getattr(module, n, None)) is int and getattr(module, n) > 2
    ]
    batch = [n for n in names if "batch" in n.lower()]
    options = []
    if batch:
        options.append(batch)
    if names and names != batch:
        options.append(names)
    return options


@contextlib.contextmanager
def _resized(module, names: list):
    saved = {n: getattr(module, n) for n in names}
    try:
        for n in names:
            setattr(module, n, saved[n] // 2 + 1)
        yield ", ".join(f"{n} {saved[n]} -> {saved[n] // 2 + 1}" for n in names)
    finally:
        for n, v in saved.items():
            setattr(module, n, v)


def options(task) -> list:
    """Lists of global names to resize, best first."""
    return _candidates(task)


def resized(task, names: list):
    """Context manager: the task's globals changed for the duration; yields a description."""
    return _resized(task.module, names)


def shape_error(description: str, exc: HarnessError) -> HarnessError:
    return HarnessError(
        exc.kind,
        f"on a second input shape ({description}) the candidate fails: {exc.message}",
    )
