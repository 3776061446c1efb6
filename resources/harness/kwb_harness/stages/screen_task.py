"""Stage ``screen``: what a task is like as training data, measured the way CUDA Agent filtered
its Ops-6K tasks. Whether its inputs fit the memory budget (sized on the meta device before
anything is allocated), whether it runs eager and under torch.compile (and agrees with itself
there), whether two runs on the same inputs give the same outputs, whether its outputs are
constant or ignore the inputs, whether they are finite, and its eager time. The stage measures;
the engine's task filter decides with the user's thresholds and caches what was measured.

The result's "screen" object always says how far the screening got: a task that fails one step
is described up to that step, with the step's error, never a harness failure.
"""

import statistics
import time

from .. import device as devices
from .. import models, values
from ..compare import compare
from ..errors import HarnessError
from ..task_loader import load_reference

# Two runs of the compiled model may differ from eager by reordered floating-point sums; this
# is what "torch.compile agrees" allows (CUDA Agent's own verification tolerance).
_COMPILE_TOLERANCE = 1e-2


def _first_tensor_values(output) -> list:
    return [t.detach() for t in values.tensors(output)]


def _constant(output) -> bool:
    tensors = _first_tensor_values(output)
    return all(t.numel() <= 1 or bool((t == t.reshape(-1)[0]).all()) for t in tensors) if tensors else True


def _finite(output) -> bool:
    import torch

    return all(bool(torch.isfinite(t).all()) for t in _first_tensor_values(output) if t.is_floating_point())


def _equal(a, b) -> bool:
    import torch

    def same(x, y) -> bool:
        if x.shape != y.shape or x.dtype != y.dtype:
            return False
        if not x.is_floating_point() and not x.is_complex():
            return torch.equal(x, y)
        # NaN in the same places is the same output (NaN != NaN would call it random).
        return bool(((x == y) | (torch.isnan(x) & torch.isnan(y))).all())

    ta, tb = _first_tensor_values(a), _first_tensor_values(b)
    return len(ta) == len(tb) and all(same(x, y) for x, y in zip(ta, tb))


def _eager_ms(model, inputs, device: str, calls: int) -> float:
    import torch

    samples = []
    with torch.no_grad():
        for _ in range(2):
            model(*inputs)
        devices.synchronize(device)
        for _ in range(calls):
            start = time.perf_counter()
            model(*inputs)
            devices.synchronize(device)
            samples.append((time.perf_counter() - start) * 1e3)
    return statistics.median(samples)


def run(req, result) -> None:
    import torch

    devices.configure(req.device, req.cpu_threads)
    devices.require(req.device)
    screen = {"step": "import", "input_bytes": None, "input_bytes_from": None, "eager_runs": False,
              "compile_runs": None, "compile_agrees": None, "deterministic": None, "constant_output": None,
              "input_dependent": None, "finite": None, "eager_ms": None, "error": ""}
    result["screen"] = screen
    try:
        task = load_reference(req.reference, req.workspace)
        screen["step"] = "size"
        meta_bytes = models.meta_input_bytes(task)
        if meta_bytes is not None:
            screen["input_bytes"], screen["input_bytes_from"] = meta_bytes, "meta"
            if req.screen_memory_bytes and meta_bytes > req.screen_memory_bytes:
                # Nothing is allocated: the engine turns this into a skip reason.
                return
        screen["step"] = "eager"
        init = models.init_inputs(task, req.seed, req.workspace)
        model = models.reference_model(task, init, req.seed, req.device, req.workspace)
        first = models.make_inputs(task, req.seed + 1, req.device, req.workspace)
        if meta_bytes is None:
            screen["input_bytes"] = values.set_bytes(first) + values.set_bytes(init)
            screen["input_bytes_from"] = "allocated"
        out = models.run_model(model, first, req.device, "reference", req.workspace)
        screen["eager_runs"] = True
        screen["finite"] = _finite(out)
        screen["constant_output"] = _constant(out)
        screen["step"] = "determinism"
        screen["deterministic"] = _equal(out, models.run_model(model, first, req.device, "reference", req.workspace))
        screen["step"] = "input dependence"
        second = models.make_inputs(task, req.seed + 2, req.device, req.workspace)
        screen["input_dependent"] = not _equal(out, models.run_model(model, second, req.device, "reference",
                                                                     req.workspace))
        screen["step"] = "eager time"
        # A forward that writes its inputs in place must not change what torch.compile gets.
        pristine = values.clone(first)
        screen["eager_ms"] = _eager_ms(model, first, req.device, req.iterations)
        if req.include_compile:
            screen["step"] = "torch.compile"
            screen["compile_runs"] = False
            with torch.no_grad():
                compiled_out = torch.compile(model)(*pristine)
            devices.synchronize(req.device)
            screen["compile_runs"] = True
            screen["compile_agrees"] = compare(compiled_out, out, _COMPILE_TOLERANCE, _COMPILE_TOLERANCE).ok
        screen["step"] = "done"
    except HarnessError as exc:
        screen["error"] = f"{exc.kind}: {exc.message}"[:2000]
    except Exception as exc:  # noqa: BLE001 - torch.compile failures come in every type
        screen["error"] = f"{type(exc).__name__}: {exc}"[:2000]
