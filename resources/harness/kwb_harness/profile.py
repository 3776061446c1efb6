"""Stages ``profile`` and ``baseline``: interleaved timing of eager, torch.compile and candidate."""

import gc
import os
import time

from . import device as devices
from . import models, values
from .errors import CANDIDATE_RUN, CUDA_ERROR, TASK_RUN, HarnessError, describe_exception
from .task_loader import load_candidate_for, load_reference
from .timing import CpuTimer, CudaTimer, rotated, summarize

# Inputs are rotated among this many clones so that a candidate caching results by
# data pointer cannot hit its cache on every call.
_INPUT_COPIES = 3


def _failure(name: str, exc: BaseException, req) -> HarnessError:
    text = describe_exception(exc, req.workspace)
    if name == "candidate":
        kind = CUDA_ERROR if req.device == "cuda" and devices.is_cuda_error(exc) else CANDIDATE_RUN
        return HarnessError(kind, f"ModelNew.forward failed while profiling: {text}")
    if name == "eager":
        return HarnessError(TASK_RUN, f"Model.forward failed while profiling: {text}")
    return HarnessError(TASK_RUN, f"torch.compile(Model) failed while profiling: {text}")


def _use_cache_dirs(cache_dir: str) -> None:
    # Inductor and Triton caches default to /tmp or $HOME, which a sandbox may not allow
    # to write; the workbench's cache folder is known to be writable and persistent.
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(cache_dir, "inductor"))
    os.environ.setdefault("TRITON_CACHE_DIR", os.path.join(cache_dir, "triton"))


def _compile(ref_model, inputs: list, req, result: dict, timings: dict):
    """torch.compile's first call compiles; it counts as warm-up and is reported apart."""
    import torch

    if not hasattr(torch, "compile"):
        timings["compile"] = {"available": False, "reason": f"torch {torch.__version__} has no torch.compile"}
        return None
    try:
        compiled = torch.compile(ref_model)
        devices.synchronize(req.device)
        started = time.perf_counter()
        compiled(*values.clone(inputs))
        devices.synchronize(req.device)
        result["compile_time_s"] = time.perf_counter() - started
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        reason = describe_exception(exc, req.workspace, frames=2)
        timings["compile"] = {"available": False, "reason": reason}
        print(f"torch.compile unavailable: {reason}")
        if req.device == "cuda" and devices.is_cuda_error(exc):
            # The context is probably broken; later measurements would be meaningless.
            raise HarnessError(CUDA_ERROR, f"torch.compile(Model) hit a CUDA error: {reason}") from None
        return None
    print(f"torch.compile: first call (compilation) took {result['compile_time_s']:.2f}s")
    return compiled


def run(req, result: dict, with_candidate: bool = True) -> None:
    import torch

    include_baselines = req.include_baselines or not with_candidate
    timings = {}
    result.update(
        timings=timings,
        compile_time_s=None,
        l2_flush=bool(req.l2_flush and req.device == "cuda"),
        order_policy="rotating-interleaved",
        warmup=req.warmup,
        rounds=req.rounds,
        iterations_per_round=max(1, req.iterations // req.rounds),
    )
    devices.configure(req.device)
    devices.require(req.device)
    _use_cache_dirs(req.cache_dir)
    ws = req.workspace
    task = load_reference(req.reference, ws)
    model_new_cls = load_candidate_for(req) if with_candidate else None

    # The same models and inputs as verify's first check.
    seed = req.seed
    init = models.init_inputs(task, seed, ws)
    ref_model = models.reference_model(task, init, seed, req.device, ws)
    new_model = None
    if with_candidate:
        new_model = models.candidate_model(model_new_cls, task, init, ref_model, seed, req.device, ws)
    inputs = models.make_inputs(task, seed, req.device, ws)

    with torch.no_grad():
        variants = {}
        if include_baselines:
            variants["eager"] = ref_model
            if req.include_compile:
                compiled = _compile(ref_model, inputs, req, result, timings)
                if compiled is not None:
                    variants["compile"] = compiled
        if with_candidate:
            variants["candidate"] = new_model
        _measure(variants, inputs, req, timings)


def _measure(variants: dict, inputs: list, req, timings: dict) -> None:
    import torch

    copies = {name: [values.clone(inputs) for _ in range(_INPUT_COPIES)] for name in variants}
    timer = CudaTimer(req.l2_flush) if req.device == "cuda" else CpuTimer()
    calls = {name: 0 for name in variants}

    def call(name: str):
        args = copies[name][calls[name] % _INPUT_COPIES]
        calls[name] += 1
        return timer.time_call(variants[name], args)

    # Warm-up for every variant before any measurement: lazy initialisation (cuBLAS
    # handles, allocator growth, JIT caches) must not land in the first variant's samples.
    for name in variants:
        try:
            for _ in range(req.warmup):
                call(name)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            raise _failure(name, exc, req) from None

    per_round = max(1, req.iterations // req.rounds)
    device_ms = {name: [] for name in variants}
    host_ms = {name: [] for name in variants}
    gc.collect()
    # A collection in the middle of a timed call would be charged to whichever variant
    # happened to allocate last.
    gc.disable()
    try:
        for round_index in range(req.rounds):
            for name in rotated(list(variants), round_index):
                try:
                    for _ in range(per_round):
                        dev, host = call(name)
                        device_ms[name].append(dev)
                        host_ms[name].append(host)
                except KeyboardInterrupt:
                    raise
                except BaseException as exc:
                    raise _failure(name, exc, req) from None
    finally:
        gc.enable()

    for name in variants:
        timings[name] = summarize(device_ms[name], host_ms[name], timer.method)
        t = timings[name]
        print(f"{name:>9}: median {t['median_ms']:.4f} ms (p10 {t['p10_ms']:.4f}, p90 {t['p90_ms']:.4f}, "
              f"{t['samples']} samples, {t['method']})")
    del copies
    if req.device == "cuda":
        torch.cuda.synchronize()
