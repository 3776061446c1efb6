"""Stages ``profile`` and ``baseline``: interleaved timing of eager, torch.compile and candidate.

Timing integrity: the clocks were captured before the candidate was imported; every variant
draws its calls from input sets of its own whose content changes on reuse; one random timed
call per round of the candidate is checked against the reference; rounds repeat until the
per-round medians agree (or a budget runs out); GPU clocks are read before and after. Then,
untimed, the candidate's kernels are listed from the profiler and its time is compared with
the memory-bandwidth floor.
"""

import gc
import os
import time

from .. import device as devices
from .. import models, values
from ..errors import CANDIDATE_RUN, CUDA_ERROR, TASK_RUN, HarnessError, describe_exception
from ..integrity import kernel_census, roofline
from ..integrity.memory_poison import tensor_bytes
from ..integrity.namespace_guard import NamespaceSnapshot
from ..integrity.namespace_guard import flags as namespace_flags
from ..integrity.output_check import TimedOutputCheck, snapshot
from ..task_loader import load_candidate_for, load_reference
from ..timing import gpu_monitor, phase_marks
from ..timing.input_pool import InputPool
from ..timing.phase_clock import PhaseClock
from ..timing.timers import CpuTimer, CudaTimer, relative_spread, rotated, summarize
from ..timing.trusted import TrustedClock, tampering_flag
from .preparation import Preparation

# Memory for each variant's input sets: enough for a few distinct sets of typical tasks
# without crowding out the task itself.
_POOL_BUDGET = {"cuda": 2 << 30, "cpu": 128 << 20}


# Each variant draws from input sets of its own, salted by the variant's name (not its position,
# so that the sets are the same whether or not torch.compile turns out to be available).
_SALTS = {"eager": 101, "compile": 202, "candidate": 303}


def pool_budget(device: str) -> int:
    return _POOL_BUDGET[device]


def _planned_variants(req, with_candidate: bool = True) -> list:
    """The variants a request times, in timing order."""
    names = []
    if req.include_baselines or not with_candidate:
        names.append("eager")
        if req.include_compile:
            names.append("compile")
    if with_candidate:
        names.append("candidate")
    return names


def pool_salts(req, with_candidate: bool = True) -> list:
    """The input-pool salts of the variants a request times, for the warm worker to
    pre-generate their inputs."""
    return [_SALTS[name] for name in _planned_variants(req, with_candidate)]


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


def _compile(ref_model, inputs: list, req, result: dict, timings: dict, marks=None):
    """torch.compile's first call compiles; it counts as warm-up and is reported apart."""
    import torch

    marks = marks or phase_marks.PhaseMarks("cpu")

    if not hasattr(torch, "compile"):
        timings["compile"] = {"available": False, "reason": f"torch {torch.__version__} has no torch.compile"}
        return None
    try:
        compiled = torch.compile(ref_model)
        devices.synchronize(req.device)
        started = time.perf_counter()
        with marks.range("torch.compile first call"):
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


class ProfilePreparation(Preparation):
    """Everything before the candidate's import: the trusted clock and timer, the task, the
    reference model, the input pools of every variant, and (GPU) the profiler's start-up and the
    reference's kernel streams for the census."""

    def __init__(self, req, with_candidate: bool = True):
        super().__init__(req)
        devices.configure(req.device)
        devices.require(req.device)
        _use_cache_dirs(req.cache_dir)
        self.clock = TrustedClock()
        if req.device == "cuda":
            self.clock.capture_cuda()
        self.timer = CudaTimer(self.clock, req.l2_flush) if req.device == "cuda" else CpuTimer(self.clock)
        self.marks = phase_marks.PhaseMarks(req.device)
        self.monitor = gpu_monitor.GpuMonitor() if req.device == "cuda" else None
        self.phases.mark("cuda context and clocks")
        ws = req.workspace
        self.task = load_reference(req.reference, ws)
        self.phases.mark("load task")
        # The same models as verify's first check.
        self.init = models.init_inputs(self.task, req.seed, ws)
        self.ref_model = models.reference_model(self.task, self.init, req.seed, req.device, ws)
        self.inputs = models.make_inputs(self.task, req.seed, req.device, ws)
        self.phases.mark("models")
        budget = pool_budget(req.device)
        self.pools = {name: InputPool(self.task, req.seed, req.device, ws, budget, salt=_SALTS[name])
                      for name in _planned_variants(req, with_candidate)}
        self.phases.mark("input pools")
        self.reference_streams = None
        if req.device == "cuda" and with_candidate and not phase_marks.timeline_recording():
            # The profiler's first start costs about a second; paid here, with the reference's
            # streams as the result. (Not while a timeline is recorded: the profiler takes
            # CUPTI's callbacks over, and the timed phases would be missing from the timeline.)
            import torch

            with torch.no_grad():
                self.reference_streams = kernel_census.reference_streams(
                    lambda: self.ref_model(*values.clone(self.inputs)))
            self.phases.mark("profiler start")


def prepare(req) -> ProfilePreparation:
    return ProfilePreparation(req)


def run(req, result: dict, with_candidate: bool = True, prepared: ProfilePreparation | None = None) -> None:
    import torch

    include_baselines = req.include_baselines or not with_candidate
    timings = {}
    result.update(
        timings=timings,
        compile_time_s=None,
        l2_flush=bool(req.l2_flush and req.device == "cuda"),
        order_policy="rotating-interleaved",
        input_policy="per-variant input sets, content rescaled on reuse",
        warmup=req.warmup,
        rounds=req.rounds,
        iterations_per_round=max(1, req.iterations // req.rounds),
        target_cv=req.target_cv,
        flags=[],
        integrity={},
    )
    if prepared is None:
        prepared = ProfilePreparation(req, with_candidate)
    prepared.report_into(result)
    # A preparation made ahead of the request is not part of this run's time.
    phases = PhaseClock() if prepared.ahead_of_request else prepared.phases
    clock, timer, marks, monitor = prepared.clock, prepared.timer, prepared.marks, prepared.monitor
    task, init, ref_model, inputs = prepared.task, prepared.init, prepared.ref_model, prepared.inputs
    ws = req.workspace

    # A candidate could also sabotage the baselines timed beside it (torch.set_num_threads(1),
    # cuDNN off) or rebind torch functions; compared once the timing is over.
    namespace = NamespaceSnapshot() if with_candidate else None
    model_new_cls = load_candidate_for(req) if with_candidate else None
    phases.mark("candidate import")

    new_model = None
    if with_candidate:
        new_model = models.candidate_model(model_new_cls, task, init, ref_model, req.seed, req.device, ws)

    with torch.no_grad():
        variants = {}
        if include_baselines:
            variants["eager"] = ref_model
            if req.include_compile:
                compiled = _compile(ref_model, inputs, req, result, timings, marks)
                if compiled is not None:
                    variants["compile"] = compiled
        if with_candidate:
            variants["candidate"] = new_model
        pools = {name: prepared.pools[name] for name in variants}
        phases.mark("models")
        checker = TimedOutputCheck(ref_model, req) if with_candidate else None
        gpu_before = monitor.read() if monitor else {"available": False, "reason": "CPU mode"}
        _measure(variants, pools, req, timer, clock, checker, timings, result, marks)
        phases.mark("timing")
        gpu_after = monitor.read() if monitor else gpu_before
        result["integrity"]["gpu_state"] = {"before": gpu_before, "after": gpu_after}
        _add_flag(result, gpu_monitor.drift_flag(gpu_before, gpu_after))
        if with_candidate:
            result["integrity"]["timed_outputs_checked"] = checker.checked
            _add_flag(result, checker.flag)
            _add_flag(result, tampering_flag(clock))
            _examine_candidate(ref_model, new_model, pools["candidate"], inputs, req, clock, timings, result,
                               prepared.reference_streams)
            phases.mark("kernel census and memory floor")
    result["phase_seconds"] = phases.report()
    if namespace is not None:
        for flag in namespace_flags(namespace):
            _add_flag(result, flag)


def _add_flag(result: dict, flag: dict | None) -> None:
    if flag is None or any(f["code"] == flag["code"] for f in result["flags"]):
        return
    result["flags"].append(flag)
    print(f"flag [{flag['severity']}] {flag['code']}: {flag['reason']}")


def _examine_candidate(ref_model, new_model, pool, inputs, req, clock, timings, result,
                       reference_streams=None) -> None:
    """Untimed evidence about the candidate: which kernels ran (GPU) and the memory floor."""
    integrity = result["integrity"]
    candidate_ms = timings.get("candidate", {}).get("median_ms")
    host_ms = timings.get("candidate", {}).get("host_median_ms")
    if req.device == "cuda" and candidate_ms and host_ms and host_ms > 3 * candidate_ms + 0.1:
        # The host clock spans the call and a full synchronisation, so it sees work the events
        # on one stream miss. Launch overhead explains a gap of tens of microseconds, not this.
        _add_flag(result, {
            "code": "host_time_exceeds_events", "severity": "warning",
            "reason": f"the host clock measured {host_ms:.4f} ms per call against {candidate_ms:.4f} ms from the "
                      "CUDA events: work may run outside the timed stream, or the call is launch-bound",
        })
    if req.device == "cuda":
        # torch's profiler takes CUPTI's buffer callbacks over: a timeline being recorded gets
        # its records of the timed phases first.
        phase_marks.flush_timeline()
        try:
            args = pool.next()
            if reference_streams is None:
                reference_streams = kernel_census.reference_streams(lambda: ref_model(*args))
            census = kernel_census.take(
                reference_streams, lambda: new_model(*args),
                kernel_census.declared_kernels(req.workspace, req.candidate),
            )
            integrity["kernels"] = census
            for flag in kernel_census.flags_for(census, candidate_ms):
                _add_flag(result, flag)
        except Exception as exc:  # the profiler is evidence, not a requirement
            integrity["kernels"] = {"available": False, "reason": f"{type(exc).__name__}: {exc}"}
    else:
        integrity["kernels"] = {"available": False,
                                "reason": "CPU mode: no kernel records; the verify stage counts extension calls"}

    output = ref_model(*values.clone(inputs))
    params = sum(t.numel() * t.element_size() for t in list(ref_model.parameters()) + list(ref_model.buffers()))
    bytes_moved = values.set_bytes(inputs) + params + sum(tensor_bytes(output))
    del output
    bandwidth = roofline.copy_bandwidth_gbs(req.device, clock)
    floor_ms = roofline.floor(bytes_moved, bandwidth)
    applies = roofline.applies(req.device, bytes_moved)
    integrity["memory_floor"] = {"bytes_moved": bytes_moved, "copy_bandwidth_gbs": bandwidth,
                                 "floor_ms": floor_ms, "applies": applies}
    print(f"memory floor: {bytes_moved / 1e6:.1f} MB at {bandwidth:.0f} GB/s = {floor_ms:.4f} ms"
          + ("" if applies else " (not applied: on the CPU only above 4x the last-level cache)"))
    if applies and candidate_ms is not None:
        _add_flag(result, roofline.floor_flag(candidate_ms, floor_ms, bytes_moved, bandwidth))


def _measure(variants: dict, pools: dict, req, timer, clock, checker, timings: dict, result: dict,
             marks=None) -> None:
    import statistics

    import torch

    marks = marks or phase_marks.PhaseMarks("cpu")

    def call(name: str, check: bool = False, mark: str | None = None):
        args = pools[name].next()
        before = snapshot(args) if check else None
        if mark is None:
            device_ms, host_ms, output = timer.time_call(variants[name], args)
        else:
            with marks.range(mark):
                device_ms, host_ms, output = timer.time_call(variants[name], args)
        if before is not None:
            checker.check(output, before)
        return device_ms, host_ms

    # Warm-up for every variant before any measurement: lazy initialisation (cuBLAS
    # handles, allocator growth, JIT caches) must not land in the first variant's samples.
    for name in variants:
        try:
            with marks.range(f"warmup {name}"):
                for _ in range(req.warmup):
                    call(name)
        except KeyboardInterrupt:
            raise
        except HarnessError:
            raise
        except BaseException as exc:
            raise _failure(name, exc, req) from None

    names = list(variants)
    per_round = max(1, req.iterations // req.rounds)
    max_rounds = max(req.rounds, req.max_rounds)
    device_ms = {name: [] for name in names}
    host_ms = {name: [] for name in names}
    round_medians = {name: [] for name in names}
    rounds_done = 0
    unstable = names
    started = clock.perf_counter()
    gc.collect()
    # A collection in the middle of a timed call would be charged to whichever variant
    # happened to allocate last.
    gc.disable()
    try:
        while True:
            for name in rotated(names, rounds_done):
                checked = checker.pick(per_round) if checker is not None and name == "candidate" else -1
                samples = []
                try:
                    with marks.range(name):
                        for k in range(per_round):
                            dev, host = call(name, k == checked,
                                             f"iteration {len(device_ms[name]) + k}" if marks.enabled else None)
                            samples.append(dev)
                            host_ms[name].append(host)
                except KeyboardInterrupt:
                    raise
                except HarnessError:
                    raise
                except BaseException as exc:
                    raise _failure(name, exc, req) from None
                device_ms[name] += samples
                round_medians[name].append(statistics.median(samples))
            rounds_done += 1
            if rounds_done < req.rounds:
                continue
            # Repeat until the per-round medians agree: single calls of tiny kernels jitter by
            # tens of percent, but their medians settle.
            unstable = [n for n in names if relative_spread(round_medians[n]) > req.target_cv]
            if not unstable or rounds_done >= max_rounds or clock.perf_counter() - started > req.time_budget_s:
                break
    finally:
        gc.enable()

    result["rounds_run"] = rounds_done
    for name in names:
        timings[name] = summarize(device_ms[name], host_ms[name], timer.method)
        t = timings[name]
        t["rounds"] = rounds_done
        t["round_cv"] = relative_spread(round_medians[name])
        t["stable"] = t["round_cv"] <= req.target_cv
        print(f"{name:>9}: median {t['median_ms']:.4f} ms (p10 {t['p10_ms']:.4f}, p90 {t['p90_ms']:.4f}, "
              f"cv {100 * t['cv']:.1f}%, round cv {100 * t['round_cv']:.1f}%, {t['samples']} samples, "
              f"{rounds_done} rounds, {t['method']})")
    if unstable:
        _add_flag(result, {
            "code": "timing_unstable", "severity": "warning",
            "reason": "per-round medians still vary after " + str(rounds_done) + " rounds: "
                      + ", ".join(f"{n} {100 * timings[n]['round_cv']:.1f}%" for n in unstable)
                      + f" (target {100 * req.target_cv:.0f}%)",
        })
    if req.device == "cuda":
        torch.cuda.synchronize()
