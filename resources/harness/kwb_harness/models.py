"""Seeded construction of the reference and candidate models and of their inputs.

Verify and profile must build exactly the same models and inputs for a given seed, so
this lives in one place.
"""

import inspect
import os

from . import values
from .errors import (
    CANDIDATE_INIT,
    CANDIDATE_RUN,
    CUDA_ERROR,
    STATE_DICT_MISMATCH,
    TASK_BAD_INIT_INPUTS,
    TASK_OUT_OF_MEMORY,
    TASK_RUN,
    TASK_TOO_LARGE,
    HarnessError,
    describe_exception,
)
from .device import is_cuda_error, synchronize


def _out_of_memory(exc: BaseException) -> bool:
    import torch

    torch_oom = getattr(torch, "OutOfMemoryError", None)
    return isinstance(exc, MemoryError) or (torch_oom is not None and isinstance(exc, torch_oom))


def _task_error(kind: str, what: str, exc: BaseException, workspace: str | None) -> HarnessError:
    """The task's own failure ``kind``, unless it ran out of memory: that depends on what else held
    the machine's or the GPU's memory at the moment (a rollout runs several evaluations at once),
    so it is TASK_OUT_OF_MEMORY, which the engine counts as the evaluator's failure (no verdict,
    and a rollout runs the episode again) rather than as a task that cannot be judged."""
    text = describe_exception(exc, workspace)
    if _out_of_memory(exc):
        return HarnessError(TASK_OUT_OF_MEMORY, f"{what} ran out of memory: {text}")
    return HarnessError(kind, f"{what} {text}")


def init_inputs(task, seed: int, workspace: str | None = None) -> list:
    values.seed_all(seed)
    try:
        init = task.get_init_inputs()
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        raise _task_error(TASK_BAD_INIT_INPUTS, "get_init_inputs() raised", exc, workspace) from None
    if not isinstance(init, (list, tuple)):
        raise HarnessError(
            TASK_BAD_INIT_INPUTS, f"get_init_inputs() must return a list or tuple, got {type(init).__name__}"
        )
    return list(init)


def reference_model(task, init: list, seed: int, device: str, workspace: str | None = None):
    values.seed_all(seed)
    try:
        model = task.model_cls(*values.clone(init))
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        raise _task_error(TASK_BAD_INIT_INPUTS, "Model(*get_init_inputs()) failed:", exc, workspace) from None
    return model.to(device).eval()


def _signature_text(cls) -> str:
    try:
        return f"{cls.__name__}{inspect.signature(cls)}"
    except (TypeError, ValueError):
        return cls.__name__


def _state_dict_problems(ref_sd: dict, new_sd: dict) -> str:
    missing = [k for k in ref_sd if k not in new_sd]
    unexpected = [k for k in new_sd if k not in ref_sd]
    shapes = [
        f"{k}: reference {list(ref_sd[k].shape)}, candidate {list(new_sd[k].shape)}"
        for k in ref_sd
        if k in new_sd and hasattr(ref_sd[k], "shape") and hasattr(new_sd[k], "shape")
        and tuple(ref_sd[k].shape) != tuple(new_sd[k].shape)
    ]
    parts = []
    if missing:
        parts.append(f"missing keys in ModelNew: {missing}")
    if unexpected:
        parts.append(f"unexpected keys in ModelNew: {unexpected}")
    if shapes:
        parts.append("shape mismatch: " + "; ".join(shapes))
    return "; ".join(parts)


def candidate_model(model_new_cls, task, init: list, ref_model, seed: int, device: str, workspace: str | None = None):
    try:
        inspect.signature(model_new_cls).bind(*init)
    except TypeError as exc:
        raise HarnessError(
            CANDIDATE_INIT,
            f"ModelNew has a different signature than Model: {_signature_text(model_new_cls)} vs "
            f"{_signature_text(task.model_cls)}; ModelNew(*get_init_inputs()) fails with: {exc}",
        ) from None
    except ValueError:
        pass  # no introspectable signature: let the call decide
    # Same seed as the reference so that state not covered by the state_dict (non-persistent
    # buffers, plain attributes) starts out identical as far as the RNG can make it.
    values.seed_all(seed)
    try:
        model = model_new_cls(*values.clone(init))
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        prefix = "ModelNew(*get_init_inputs()) failed"
        if isinstance(exc, TypeError):
            prefix += " (different signature than Model?)"
        raise HarnessError(CANDIDATE_INIT, f"{prefix}: " + describe_exception(exc, workspace)) from None

    ref_sd = ref_model.state_dict()
    try:
        new_sd = model.state_dict()
    except Exception as exc:
        raise HarnessError(CANDIDATE_INIT, "ModelNew.state_dict() failed: " + describe_exception(exc, workspace)) from None
    problems = _state_dict_problems(ref_sd, new_sd)
    if problems:
        raise HarnessError(STATE_DICT_MISMATCH, f"ModelNew's parameters and buffers differ from Model's: {problems}")
    try:
        model.load_state_dict(ref_sd, strict=True)
    except Exception as exc:
        raise HarnessError(STATE_DICT_MISMATCH, f"load_state_dict(Model's state_dict) failed: {exc}") from None
    try:
        model = model.to(device).eval()
    except Exception as exc:
        raise HarnessError(CANDIDATE_INIT, f"moving ModelNew to {device} failed: " + describe_exception(exc, workspace)) from None
    return model


def _generate_inputs(task, seed: int, workspace: str | None) -> list:
    values.seed_all(seed + 1)
    try:
        inputs = task.get_inputs()
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        raise _task_error(TASK_RUN, "get_inputs() raised", exc, workspace) from None
    if not isinstance(inputs, (list, tuple)):
        raise HarnessError(TASK_RUN, f"get_inputs() must return a list or tuple, got {type(inputs).__name__}")
    return list(inputs)


# CPU inputs by (task file, its content, its size globals, seed), filled by the warm worker's
# server process (fork_server.py) before it forks a stage. A forked stage inherits them and
# skips get_inputs(); a cold stage process starts with it empty.
_cpu_input_cache = {}


def _task_key(task, seed: int):
    module = task.module
    path = getattr(module, "__file__", None)
    if not path:
        return None
    try:
        with open(path, "rb") as handle:
            content = handle.read()
    except OSError:
        return None
    # Sizes are module globals (integrity/alternate_shape.py changes them for the second shape).
    scalars = tuple(sorted((k, v) for k, v in vars(module).items()
                           if not k.startswith("__") and type(v) in (int, float, bool, str)))
    return (os.path.abspath(path), hash(content), scalars, seed)


def warmable(task) -> bool:
    """Whether get_inputs() can run in a process that must not touch CUDA: a task that
    mentions a device in its source might create its inputs on the GPU."""
    try:
        with open(task.module.__file__, "r", encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except (OSError, AttributeError, TypeError):
        return False
    return "cuda" not in text and "device" not in text


def cpu_inputs(task, seed: int, workspace: str | None = None) -> list:
    """The task's inputs for ``seed`` on the CPU, generated once per process (cached)."""
    key = _task_key(task, seed)
    if key is not None and key in _cpu_input_cache:
        return _cpu_input_cache[key]
    inputs = _generate_inputs(task, seed, workspace)
    if key is not None:
        _cpu_input_cache[key] = inputs
    return inputs


def cached_input_bytes() -> int:
    return sum(values.set_bytes(inputs) for inputs in _cpu_input_cache.values())


def meta_input_bytes(task) -> int | None:
    """The inputs' and initial inputs' size without allocating them: get_inputs() and
    get_init_inputs() run with the meta device as torch's default. None when a task cannot be
    sized that way (it reads values, uses numpy, names a device)."""
    import torch

    try:
        with torch.device("meta"):
            sized = list(task.get_inputs()) + list(task.get_init_inputs())
    except Exception:  # noqa: BLE001 - any failure only means "size it by allocating"
        return None
    tensors = values.tensors(sized)
    if any(t.device.type != "meta" for t in tensors):
        return None
    return sum(t.numel() * t.element_size() for t in tensors)


def check_input_budget(task, budget_bytes: int) -> None:
    """Refuses, before anything is allocated, a task whose inputs need more than the budget (0:
    none): on this machine it cannot be judged at all, which is the task's failure and not any
    candidate's. A task that cannot be sized on the meta device is left to the memory limit."""
    if not budget_bytes:
        return
    need = meta_input_bytes(task)
    if need is not None and need > budget_bytes:
        raise HarnessError(
            TASK_TOO_LARGE,
            f"the task's inputs need {need / 2**30:.2f} GiB, more than the {budget_bytes / 2**30:.2f} GiB "
            "an evaluation's inputs may take on this machine (a quarter of its memory budget); "
            "evaluate it on a machine with more memory, or with smaller sizes",
        )


def make_inputs(task, seed: int, device: str, workspace: str | None = None) -> list:
    key = _task_key(task, seed) if _cpu_input_cache else None
    if key is not None and key in _cpu_input_cache:
        values.seed_all(seed + 1)  # the RNG ends where a generating call would start it
        cached = _cpu_input_cache[key]
        return values.clone(cached) if device == "cpu" else values.to_device(cached, device)
    return values.to_device(_generate_inputs(task, seed, workspace), device)


def run_model(model, inputs: list, device: str, role: str, workspace: str | None = None, guard=None,
              clone_inputs: bool = True):
    """One forward on fresh clones of the inputs (or on ``inputs`` themselves when the caller
    cloned them and wants to inspect them afterwards); errors are attributed to ``role``.
    ``guard`` (a dispatch mode from integrity/op_guard.py) watches the forward pass, not the input cloning."""
    import contextlib

    import torch

    try:
        with torch.no_grad():
            cloned = values.clone(inputs) if clone_inputs else inputs
            with guard if guard is not None else contextlib.nullcontext():
                output = model(*cloned)
            # Kernel launches are asynchronous: without this, a faulting kernel would be
            # blamed on whatever touches the GPU next.
            synchronize(device)
        return output
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        if role == "reference":
            raise _task_error(TASK_RUN, "Model.forward failed:", exc, workspace) from None
        text = describe_exception(exc, workspace)
        if device == "cuda" and is_cuda_error(exc):
            raise HarnessError(CUDA_ERROR, "ModelNew.forward hit a CUDA error: " + text) from None
        raise HarnessError(CANDIDATE_RUN, "ModelNew.forward failed: " + text) from None
