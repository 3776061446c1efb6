"""Stages ``profile`` and ``baseline``: interleaved timing of eager, torch.compile and candidate.

Timing integrity: eager and torch.compile are timed here, in the judge, which never imports the
candidate; the candidate is timed in its own process (isolation/), stopped while the others run,
and that process's own timings are cross-checked against this process's clock around each batch
of calls (timing/external_clock.py). Every variant draws its calls from input sets of its own
whose content changes on reuse; after each batch the judge picks several of the candidate's calls
at random and checks their outputs against the reference; rounds repeat until the per-round
medians agree (or a budget runs out); GPU clocks are read before and after. Then, untimed, the
candidate's kernels are listed from the profiler and its time is compared with the
memory-bandwidth floor.
"""

import gc
import os
import time

from .. import device as devices
from .. import models, values
from ..errors import CANDIDATE_RUN, CUDA_ERROR, TASK_RUN, HarnessError, describe_exception
from ..integrity import judge_watch, kernel_census, kernel_records, roofline
from ..integrity.memory_poison import tensor_bytes
from ..isolation import candidate_process
from ..isolation.remote_timing import CANDIDATE_SALT, RemoteTimedCandidate, SealedCensus
from ..isolation.reports import checked_flags, guard_flag, missing_report_flag, well_formed
from ..task_loader import load_reference
from ..timing import busy_host, external_clock, gpu_monitor, phase_marks, speedup_interval, timed_lane
from ..timing.input_pool import InputPool
from ..timing.phase_clock import PhaseClock
from ..timing.timers import CpuTimer, CudaTimer, relative_spread, rotated, summarize
from ..timing.trusted import TrustedClock
from .preparation import Preparation

# Memory for each variant's input sets: enough for a few distinct sets of typical tasks
# without crowding out the task itself.
_POOL_BUDGET = {"cuda": 2 << 30, "cpu": 128 << 20}


# Each variant draws from input sets of its own, salted by the variant's name (not its position,
# so that the sets are the same whether or not torch.compile turns out to be available).
_SALTS = {"eager": 101, "compile": 202, "candidate": CANDIDATE_SALT}


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


def _use_cache_dirs(req) -> None:
    """torch.compile's caches for this stage alone. Their entries are Python modules and kernels
    that torch.compile loads; in a folder a candidate could have written, they would be code run
    by the judge. The scratch folder is the candidate's home in every stage of the run, so a
    candidate of the verify stage could have planted entries there: the folder is new, under a
    name drawn now. The judge compiles before this stage's candidate is imported, so nothing of
    the candidate's can write it while it is used."""
    import tempfile

    root = tempfile.mkdtemp(prefix="kwb-compile-", dir=req.scratch_dir or None)
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(root, "inductor")
    os.environ["TRITON_CACHE_DIR"] = os.path.join(root, "triton")


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
    """Everything before the candidate's import: the candidate's process (forked first), the
    trusted clock and timer, the task, the reference model, the input pools of every variant (the
    candidate's as the judge's copy of the one in the candidate's process) and the calibration of
    the judge's clock."""

    def __init__(self, req, with_candidate: bool = True):
        super().__init__(req)
        # Paid once per process (the warm worker's children inherit it): timed apart from the
        # CUDA context, which a cold CPU stage would otherwise seem to spend seconds on.
        candidate_process.warm_before_fork()
        self.phases.mark("torch and guard warm-up")
        if with_candidate:
            # Forked first: before this process has a CUDA context or anything the candidate could
            # use. It prepares its side (device, clocks, task, its input pool) meanwhile.
            self.candidate = candidate_process.start_for(req, guard=req.device == "cpu")
            self.candidate.post({"op": "pool", "salt": _SALTS["candidate"], "budget": pool_budget(req.device)})
        kernel_records.record_judge_kernels(req)
        devices.configure(req.device, req.cpu_threads)
        devices.require(req.device)
        self.clock = TrustedClock()
        if req.device == "cuda":
            self.clock.capture_cuda()
        self.timer = (CudaTimer(self.clock, req.l2_flush, req.head_start_us)
                      if req.device == "cuda" else CpuTimer(self.clock))
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
        self.overhead = None
        self.sealed = None
        if with_candidate:
            self.overhead = external_clock.calibrate(self.timer, self.clock)
            self.phases.mark("clock calibration")
            self.candidate.collect()
            self.candidate.collect()
            # Before the candidate's import: its code could slow the empty replies down later.
            self.overhead.round_trip_ms = external_clock.round_trip_ms(lambda: self.candidate.ask({"op": "ping"}))
            # Once the candidate's process is idle: measured while it still prepared, on a
            # two-core machine, the digest took half again as long as it does in the batches,
            # and the excess would hide that much of every call from the judge's clock.
            reference_output = models.run_model(self.ref_model, self.inputs, req.device, "reference", ws)
            # On the thread count the candidate's process digests with (device.one_thread).
            with devices.one_thread(req.device):
                self.overhead.digest_ms = external_clock.digest_ms(reference_output, self.clock)
            del reference_output
            print("judge's clock, per call: timer {:.4f} ms, output digest {:.4f} ms; round trip {:.4f} ms".format(
                self.overhead.outside_ms, self.overhead.digest_ms, self.overhead.round_trip_ms))
            self.phases.mark("candidate process ready")
            if self.candidate.records is not None:
                self.sealed = SealedCensus(self.candidate.records)
                self.sealed.calibrate(self.candidate, self.pools["candidate"], req)
                self.phases.mark("harness kernels")


def prepare(req) -> ProfilePreparation:
    return ProfilePreparation(req)


def run(req, result: dict, with_candidate: bool = True, prepared: ProfilePreparation | None = None) -> None:
    if prepared is None:
        prepared = ProfilePreparation(req, with_candidate)
    try:
        _run(req, result, with_candidate, prepared)
    finally:
        prepared.close()


def _run(req, result: dict, with_candidate: bool, prepared: ProfilePreparation) -> None:
    import torch

    include_baselines = req.include_baselines or not with_candidate
    timings = {}
    result.update(
        timings=timings,
        compile_time_s=None,
        l2_flush=bool(req.l2_flush and req.device == "cuda"),
        head_start_us=req.head_start_us if req.device == "cuda" else 0.0,
        order_policy="rotating-interleaved",
        input_policy="per-variant input sets, content rescaled on reuse",
        warmup=req.warmup,
        rounds=req.rounds,
        iterations_per_round=max(1, req.iterations // req.rounds),
        target_cv=req.target_cv,
        flags=[],
        integrity={},
    )
    if with_candidate:
        result["judge"] = "separate process"
    prepared.report_into(result)
    # A preparation made ahead of the request is not part of this run's time.
    phases = PhaseClock() if prepared.ahead_of_request else prepared.phases
    clock, timer, marks, monitor = prepared.clock, prepared.timer, prepared.marks, prepared.monitor
    task, init, ref_model, inputs = prepared.task, prepared.init, prepared.ref_model, prepared.inputs
    ws = req.workspace

    process = prepared.candidate
    remote = None
    # Before the candidate is loaded: from then on its processes could disturb the judge.
    watch = judge_watch.JudgeWatch()
    with torch.no_grad():
        variants = {}
        if include_baselines:
            variants["eager"] = ref_model
            if req.include_compile:
                _use_cache_dirs(req)
                # Compiled (and its first call run) before the candidate is imported anywhere:
                # nothing of the candidate's can touch the caches torch.compile loads code from.
                compiled = _compile(ref_model, inputs, req, result, timings, marks)
                if compiled is not None:
                    variants["compile"] = compiled
                phases.mark("torch.compile")
        # Everything so far shared the GPU with other evaluations' untimed work; from here to the
        # stage's end nothing else runs on it (timed_lane.py). Before the candidate's import: no
        # candidate code may wait beside another evaluation's timed calls, where its threads
        # could disturb them.
        timed_lane.take()
        phases.mark("wait for the GPU alone")
        if with_candidate:
            process.ask({"op": "load", "candidate": req.candidate, "extension_path": req.extension_path,
                         "kernels_dir": req.kernels_dir})
            phases.mark("candidate import")
            remote = RemoteTimedCandidate(process, prepared.pools["candidate"], ref_model, req,
                                          prepared.overhead, prepared.sealed)
            variants["candidate"] = remote
        pools = {name: prepared.pools[name] for name in variants if name != "candidate"}
        phases.mark("models")
        gpu_before = monitor.read() if monitor else {"available": False, "reason": "CPU mode"}
        _measure(variants, pools, req, timer, clock, remote, timings, result, marks)
        phases.mark("timing")
        _add_flag(result, watch.flag())
        if remote is not None:
            for part, seconds in remote.seconds.items():
                phases.note("timing: " + part, seconds)
        gpu_after = monitor.read() if monitor else gpu_before
        result["integrity"]["gpu_state"] = {"before": gpu_before, "after": gpu_after}
        _add_flag(result, gpu_monitor.drift_flag(gpu_before, gpu_after))
        if with_candidate:
            result["integrity"]["timed_outputs_checked"] = remote.outputs.checked
            result["integrity"]["precision_floor"] = remote.outputs.floor.evidence()
            _add_flag(result, remote.outputs.floor.unmeasured_flag())
            result["integrity"]["external_timing"] = remote.external.evidence()
            if remote.external.flag() is not None:  # what each batch left unexplained, for the reader
                for line in remote.external.batch_lines():
                    print(line)
            for flag in (remote.outputs.flag, remote.outputs.precision_warning, remote.external.flag(),
                         process.processes_flag()):
                _add_flag(result, flag)
            _examine_candidate(ref_model, remote, inputs, req, clock, timings, result)
            phases.mark("kernel census and memory floor")
            try:
                report, _ = process.ask({"op": "report"})
                if not well_formed(report):
                    raise HarnessError(CANDIDATE_RUN, "a malformed report")
                for flag in checked_flags(report.get("flags")):
                    _add_flag(result, flag)
                _add_flag(result, guard_flag(report, process.guard_requested))
            except HarnessError as exc:
                print(f"the candidate's process gave no report: {exc.message}")
                _add_flag(result, missing_report_flag(exc.message))
    result["phase_seconds"] = phases.report()


def _add_flag(result: dict, flag: dict | None) -> None:
    if flag is None or any(f["code"] == flag["code"] for f in result["flags"]):
        return
    result["flags"].append(flag)
    print(f"flag [{flag['severity']}] {flag['code']}: {flag['reason']}")


def _examine_candidate(ref_model, remote, inputs, req, clock, timings, result) -> None:
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
    if req.counters_run:
        # Under Nsight Compute its own injection holds CUPTI: a census here would see no kernel
        # and call the candidate empty. The counters themselves are the evidence of this run.
        integrity["kernels"] = {"available": False,
                                "reason": "under Nsight Compute: ncu collects the kernels' counters instead"}
        return
    if req.device == "cuda":
        # torch's profiler takes CUPTI's buffer callbacks over: a timeline being recorded gets
        # its records of the timed phases first.
        phase_marks.flush_timeline()
        if remote.sealed is not None:
            census = remote.sealed.take(kernel_census.declared_kernels(req.workspace, req.candidate),
                                        remote.process)
            _add_flag(result, census.pop("flag", None))
            integrity["kernels"] = census
            if census["available"]:
                for flag in kernel_census.flags_for(census, candidate_ms):
                    _add_flag(result, flag)
            else:
                print(f"no kernel census: {census['reason']}")
            return _memory_floor(ref_model, inputs, req, clock, candidate_ms, result)
        try:
            census = kernel_census.checked(remote.census())
            integrity["kernels"] = census
            for flag in kernel_census.flags_for(census, candidate_ms):
                _add_flag(result, flag)
            # The census calls' outputs are checked too (a candidate that is only right while
            # profiled, or the other way round).
            _add_flag(result, remote.outputs.flag)
        except HarnessError as exc:  # the profiler is evidence, not a requirement
            integrity["kernels"] = {"available": False, "reason": f"{exc.kind}: {exc.message}"}
        except (KeyError, TypeError, ValueError) as exc:
            integrity["kernels"] = {"available": False, "reason": f"a malformed census: {type(exc).__name__}: {exc}"}
    else:
        integrity["kernels"] = {"available": False,
                                "reason": "CPU mode: no kernel records; the verify stage counts extension calls"}
    _memory_floor(ref_model, inputs, req, clock, candidate_ms, result)


def _memory_floor(ref_model, inputs, req, clock, candidate_ms, result) -> None:
    """The memory-bandwidth floor of the task on this device, and the flag for a candidate
    faster than it."""
    integrity = result["integrity"]
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


def _measure(variants: dict, pools: dict, req, timer, clock, remote, timings: dict, result: dict,
             marks=None) -> None:
    """Times the variants in rotating rounds. eager and torch.compile run here, in the judge;
    the candidate runs in its own process (``remote``), which is stopped while the others are
    timed so that nothing of the candidate's competes with them."""
    import statistics

    import torch

    marks = marks or phase_marks.PhaseMarks("cpu")
    # Per variant timed here: run-queue wait over its kept rounds, rounds timed again, and
    # whether a kept round was still disturbed (busy_host.py).
    host_wait_ms = {name: 0.0 for name in variants}
    retimed = {name: 0 for name in variants}
    host_disturbed = {name: False for name in variants}

    def timed_calls(name: str, count: int, label: str) -> tuple:
        devices_ms, hosts_ms = [], []
        with marks.range(label):
            for k in range(count):
                args = pools[name].next()
                if marks.enabled:
                    with marks.range(f"iteration {k}"):
                        device, host, _ = timer.time_call(variants[name], args)
                else:
                    device, host, _ = timer.time_call(variants[name], args)
                devices_ms.append(device)
                hosts_ms.append(host)
        return devices_ms, hosts_ms

    def local_round(name: str, count: int, label: str, warmup: bool) -> tuple:
        """A round of eager or torch.compile, timed again on a GPU while the host kept this
        thread waiting (busy_host.py). Not warm-up rounds, which are not measured; and not on
        the CPU, where every variant's wall-clock time takes the host's load alike and rotating
        the variants shares it out (CI's two busy cores would time most rounds again)."""
        if remote is not None:
            remote.process.pause()
        try:
            if warmup or req.device != "cuda":
                return timed_calls(name, count, label)

            def retimed_because(waited: float, measured: float) -> None:
                print(f"{label}: timed again, its thread waited {waited:.2f} ms for a CPU while it "
                      f"measured {measured:.2f} ms", flush=True)

            kept = busy_host.timed_round(lambda: timed_calls(name, count, label),
                                         on_retry=retimed_because)
            host_wait_ms[name] += kept.waited_ms
            retimed[name] += kept.retimed
            host_disturbed[name] = host_disturbed[name] or kept.disturbed
            return kept.devices_ms, kept.hosts_ms
        finally:
            if remote is not None:
                remote.process.resume()

    def run_round(name: str, count: int, label: str, warmup: bool = False) -> tuple:
        try:
            if name == "candidate":
                with marks.range(label):
                    return remote.batch(count, warmup)
            return local_round(name, count, label, warmup)
        except KeyboardInterrupt:
            raise
        except HarnessError:
            raise
        except BaseException as exc:
            raise _failure(name, exc, req) from None

    def speedup_bounds() -> dict:
        """Each baseline's speed-up interval over the rounds so far, against this run's rounds of
        it or the cached ones."""
        if "candidate" not in round_medians:
            return {}
        found = {}
        for base in ("eager", "compile"):
            bounds = speedup_interval.interval(round_medians.get(base) or req.baseline_rounds.get(base) or [],
                                               round_medians["candidate"])
            if bounds is not None:
                found[base] = bounds
        return found

    def undecided_milestones() -> list:
        """The baselines whose speed-up interval still straddles the milestone threshold."""
        if req.milestone_threshold <= 0:
            return []
        return [base for base, bounds in speedup_bounds().items()
                if speedup_interval.undecided(bounds, req.milestone_threshold)]

    # Warm-up for every variant before any measurement: lazy initialisation (cuBLAS
    # handles, allocator growth, JIT caches) must not land in the first variant's samples.
    for name in variants:
        if req.warmup:
            run_round(name, req.warmup, f"warmup {name}", warmup=True)

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
                samples, hosts = run_round(name, per_round, name)
                device_ms[name] += samples
                host_ms[name] += hosts
                round_medians[name].append(statistics.median(samples))
            rounds_done += 1
            if rounds_done < req.rounds:
                continue
            # Repeat until the per-round medians agree (single calls of tiny kernels jitter by
            # tens of percent, but their medians settle) and no milestone is left to chance.
            unstable = [n for n in names if relative_spread(round_medians[n]) > req.target_cv]
            undecided = undecided_milestones()
            if (not unstable and not undecided) or rounds_done >= max_rounds \
                    or clock.perf_counter() - started > req.time_budget_s:
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
        t["round_medians_ms"] = list(round_medians[name])
        if name != "candidate" and req.device == "cuda":
            t["host_wait_ms"] = host_wait_ms[name]
            t["rounds_retimed"] = retimed[name]
            t["host_disturbed"] = host_disturbed[name]
        print(f"{name:>9}: median {t['median_ms']:.4f} ms (p10 {t['p10_ms']:.4f}, p90 {t['p90_ms']:.4f}, "
              f"cv {100 * t['cv']:.1f}%, round cv {100 * t['round_cv']:.1f}%, {t['samples']} samples, "
              f"{rounds_done} rounds, {t['method']})")
    if "candidate" in round_medians:
        intervals = {}
        for base, bounds in speedup_bounds().items():
            intervals[base] = list(bounds)  # [low, high], as the engine's record keeps it
            print(f"speed-up vs {base}: {100 * speedup_interval.LEVEL:.0f}% interval "
                  f"[{bounds[0]:.3f}x, {bounds[1]:.3f}x] over {rounds_done} rounds")
        timings["candidate"]["speedup_intervals"] = intervals
        timings["candidate"]["interval_level"] = speedup_interval.LEVEL
    if unstable:
        _add_flag(result, {
            "code": "timing_unstable", "severity": "warning",
            "reason": "per-round medians still vary after " + str(rounds_done) + " rounds: "
                      + ", ".join(f"{n} {100 * timings[n]['round_cv']:.1f}%" for n in unstable)
                      + f" (target {100 * req.target_cv:.0f}%)",
        })
    if req.device == "cuda":
        torch.cuda.synchronize()
