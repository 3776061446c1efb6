"""Stage ``verify``: runs reference and candidate on seeded inputs and compares outputs.

This process is the judge: it computes the reference outputs and compares, and never imports the
candidate, which runs in its own process (isolation/) and sends its outputs back as raw bytes.
Besides the comparison, the judge checks that outputs are plain tensors, that two runs on the
same inputs agree (reads of uninitialised memory; free memory is poisoned before each run), and
that a second, derived shape passes too (kernels baked for the one test shape). The candidate's
process adds what only it can see: torch operators under the guard, inputs modified in place,
threads left running, replaced timers and torch names.
"""

import gc
import time

from .. import device as devices
from .. import models
from ..compare import compare
from ..errors import CANDIDATE_RUN, CUDA_ERROR, OUTPUT_MISMATCH, SECOND_SHAPE_FAILED, HarnessError
from ..integrity import alternate_shape, judge_watch, output_digest
from ..integrity.precision_floor import PrecisionFloor
from ..isolation import candidate_process
from ..isolation.candidate_process import CandidateProcess
from ..isolation.wire_values import Foreign
from ..isolation.reports import checked_flags, guard_flag, missing_report_flag, well_formed
from ..task_loader import load_reference
from ..timing.phase_clock import PhaseClock
from ..values import flatten
from .preparation import Preparation


class _Flags:
    """The stage's flags, one per code, printed as they are found."""

    def __init__(self, result: dict):
        self._result = result

    def add(self, flag: dict | None) -> None:
        if flag is None or any(f["code"] == flag["code"] for f in self._result["flags"]):
            return
        self._result["flags"].append(flag)
        print(f"flag [{flag['severity']}] {flag['code']}: {flag['reason']}")


def _merge_stats(merged: dict, stats: list) -> None:
    for entry in stats:
        best = merged.get(entry["index"])
        if best is None:
            merged[entry["index"]] = dict(entry)
            continue
        best["max_abs_error"] = max(best["max_abs_error"], entry["max_abs_error"])
        best["max_rel_error"] = max(best["max_rel_error"], entry["max_rel_error"])


def _same_bits(a, b) -> bool:
    import torch

    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.numel() == 0:
        return True
    return torch.equal(a.detach().reshape(-1).view(torch.uint8), b.detach().reshape(-1).view(torch.uint8))


def _identical(first, second) -> bool:
    import torch

    a, b = flatten(first), flatten(second)
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor):
            if type(x) is not type(y) or x.device != y.device or not _same_bits(x, y):
                return False
        elif isinstance(x, torch.Tensor) or isinstance(y, torch.Tensor) or type(x) is not type(y) or x != y:
            return False
    return True


def _require_plain_outputs(output, expected, flags: _Flags) -> None:
    """Lazy wrappers and tensor subclasses can compute on access or fake comparisons; only a
    plain, materialised torch.Tensor proves the kernel produced the values. (What crosses from
    the candidate's process is raw bytes, so nothing computes here; the finding is still
    reported.)"""
    import torch

    for index, (c, r) in enumerate(zip(flatten(output), flatten(expected))):
        if isinstance(r, torch.Tensor) and type(c) is not torch.Tensor:
            what = c.type_name if isinstance(c, Foreign) else f"{type(c).__module__}.{type(c).__qualname__}"
            flags.add({"code": "lazy_output", "severity": "strict",
                       "reason": f"output {index} is a {what}, not a plain torch.Tensor"})
            raise HarnessError(OUTPUT_MISMATCH, f"output {index} is a {what}, expected a plain torch.Tensor")


class _ReferenceCase:
    """One seeded check prepared before any candidate code is imported: the reference model,
    the inputs and the expected outputs. A candidate that later patches torch cannot change
    what the reference computed."""

    def __init__(self, req, task, seed: int, description: str = ""):
        ws = req.workspace
        self.seed = seed
        self.description = description
        self.init = models.init_inputs(task, seed, ws)
        self.ref_model = models.reference_model(task, self.init, seed, req.device, ws)
        self.inputs = models.make_inputs(task, seed, req.device, ws)
        self.expected = models.run_model(self.ref_model, self.inputs, req.device, "reference", ws)


class _RemoteCandidate:
    """Runs the candidate on prepared cases in its own process; every verdict is the judge's."""

    def __init__(self, req, process: CandidateProcess, flags: _Flags):
        self.req, self.process, self.flags = req, process, flags
        self.last_stats = []
        self.precision_checked = False
        # Where the checks' time goes (the stage's phase parts).
        self.seconds = {"candidate calls": 0.0, "fetch outputs": 0.0, "compare": 0.0}

    def _charge(self, part: str, since: float) -> float:
        now = time.perf_counter()
        self.seconds[part] += now - since
        return now

    def _outputs(self, case: _ReferenceCase, calls: int, resize) -> list:
        """The outputs of ``calls`` calls on the case's inputs; None for a repeat whose committed
        digest equals the first call's: the same bits, so there is nothing to fetch."""
        req = self.req
        key = output_digest.new_key()
        message = {"op": "calls", "seed": case.seed, "resize": resize, "poison": True, "watch_inputs": True,
                   "digest_key": key, "inputs": [{"seed": case.seed}] * calls}
        started = time.perf_counter()
        reply, _ = self.process.ask(message)
        started = self._charge("candidate calls", started)
        digests = output_digest.committed_digests(reply, calls)
        # A repeat's digest is as much the candidate's word as the bytes it would send: fetching
        # them would add no evidence, only a copy of the output.
        wanted = [0] + [index for index in range(1, calls) if digests[index] != digests[0]]
        payload = self.process.fetch(wanted, req.device)
        if not isinstance(payload, dict) or not isinstance(payload.get("outputs"), list) \
                or len(payload["outputs"]) != len(wanted):
            raise HarnessError(OUTPUT_MISMATCH, "the candidate's process did not return the outputs asked for")
        changed = output_digest.first_changed(payload["outputs"], wanted, digests, key)
        if changed is not None:
            self.flags.add(output_digest.changed_flag(changed))
        outputs = [None] * calls
        for index, output in zip(wanted, payload["outputs"]):
            outputs[index] = output
        self._charge("fetch outputs", started)
        return outputs

    def run(self, case: _ReferenceCase, determinism: bool = True, resize=None) -> list:
        req = self.req
        outputs = self._outputs(case, 2 if determinism else 1, resize)
        output = outputs[0]
        started = time.perf_counter()
        _require_plain_outputs(output, case.expected, self.flags)
        comparison = compare(output, case.expected, req.atol, req.rtol, req.dtype_tolerances)
        # Kept for the caller: a failing check still reports how far off each output was.
        self.last_stats = comparison.stats
        if not comparison.ok:
            raise HarnessError(comparison.kind, comparison.message)
        if not self.precision_checked:
            # Once per stage: verify's calls are not timed, so precision lost on a later check would
            # buy nothing; the profile stage holds its timed calls to the same floor.
            self.precision_checked = True
            floor = PrecisionFloor(case.ref_model, req.device)
            self.flags.add(floor.flag_for(output, case.expected, case.inputs))
            floor.release()

        if determinism and outputs[1] is not None:
            # The same inputs again, on freshly poisoned memory, gave other bits: an answer that
            # depends on what happened to be in memory changes beyond the tolerance, one computed
            # with a different order of (atomic) additions does not.
            again = outputs[1]
            repeat = None if _identical(again, output) else compare(again, output, req.atol, req.rtol, req.dtype_tolerances)
            if repeat is not None and not repeat.ok:
                self.flags.add({"code": "nondeterministic_output", "severity": "strict",
                                "reason": "two runs on the same inputs disagree (uninitialised memory?): "
                                          + repeat.message})
        self._charge("compare", started)
        return comparison.stats


def _second_shape_case(req, task, seed: int):
    """The reference on a derived shape, or None, and the reason when there is none."""
    options = alternate_shape.options(task)
    if not options:
        return None, {"checked": False, "reason": "the task has no size parameters that only get_inputs() reads"}
    for names in options:
        with alternate_shape.resized(task, names) as description:
            try:
                # The reference must accept the shape, or the task does not allow it.
                case = _ReferenceCase(req, task, seed, description)
            except HarnessError:
                continue
        case.resize = list(names)
        return case, {}
    return None, {"checked": False, "reason": "the reference does not run on a derived shape"}


def _check_second_shape(runner: _RemoteCandidate, case, result: dict) -> None:
    if case is None:
        print("second shape: not checked (" + result["second_shape"]["reason"] + ")")
        return
    try:
        runner.run(case, determinism=False, resize=case.resize)
    except HarnessError as exc:
        result["second_shape"] = {"checked": True, "passed": False, "description": case.description}
        kind = exc.kind if exc.kind == CUDA_ERROR else SECOND_SHAPE_FAILED
        raise HarnessError(kind, f"on a second input shape ({case.description}): {exc.message}") from None
    result["second_shape"] = {"checked": True, "passed": True, "description": case.description}
    print(f"second shape ({case.description}): PASS")


def _judge_disturbed(watch, flags: _Flags) -> bool:
    """Whether the candidate's processes have changed how the judge runs (pinned it to one CPU,
    lowered its priority, stopped it): a strict finding, so the checks end there. A judge pinned
    beside its own threads at the lowest priority compares 20-50x slower; going on would only
    spend the evaluation's time on a candidate already rejected."""
    flag = watch.flag("checked the candidate", "a candidate's processes reached into the judge's process")
    if flag is None:
        return False
    flags.add(flag)
    print("checks stopped: the judge was disturbed")
    return True


def check_seeds(req) -> list:
    """One seed per check (the warm worker pre-generates their inputs)."""
    return [req.seed + index * 1000 for index in range(req.checks)]


class VerifyPreparation(Preparation):
    """Everything the reference contributes, computed in the judge, and the candidate's process,
    forked before any of it exists and prepared (device, clocks, task) meanwhile."""

    def __init__(self, req):
        super().__init__(req)
        # Paid once per process (the warm worker's children inherit it): timed apart from the
        # CUDA context, which a cold CPU stage would otherwise seem to spend seconds on.
        candidate_process.warm_before_fork()
        self.phases.mark("torch and guard warm-up")
        # Forked first: before this process has a CUDA context or anything the candidate could
        # use; it prepares its side (device, clocks, task) while this one computes references.
        self.candidate = candidate_process.start_for(req, guard=True)
        devices.configure(req.device, req.cpu_threads)
        devices.require(req.device)
        devices.synchronize(req.device)  # creates the CUDA context now, so it is timed on its own
        self.phases.mark("cuda context")
        self.task = load_reference(req.reference, req.workspace)
        self.phases.mark("load task")
        self.cases = [_ReferenceCase(req, self.task, seed) for seed in check_seeds(req)]
        self.phases.mark("references")
        self.shape_case, self.second_shape = _second_shape_case(req, self.task, req.seed)
        self.phases.mark("second-shape reference")
        self.candidate.collect()
        self.phases.mark("candidate process ready")


def prepare(req) -> VerifyPreparation:
    return VerifyPreparation(req)


def run(req, result: dict, prepared: VerifyPreparation | None = None) -> None:
    result.update(checks_run=0, checks_passed=0, correct=False, outputs=[], failures=[], flags=[],
                  torch_ops={}, extension_calls={}, second_shape={}, judge="separate process")
    if prepared is None:
        prepared = VerifyPreparation(req)
    try:
        _run(req, result, prepared)
    finally:
        prepared.close()


def _run(req, result: dict, prepared: VerifyPreparation) -> None:
    prepared.report_into(result)
    # A preparation made ahead of the request is not part of this run's time.
    phases = PhaseClock() if prepared.ahead_of_request else prepared.phases
    flags = _Flags(result)
    cases, shape_case = prepared.cases, prepared.shape_case
    result["second_shape"] = dict(prepared.second_shape)
    process = prepared.candidate
    merged = {}
    # Before the candidate is loaded: from then on its processes could reach the judge.
    watch = judge_watch.JudgeWatch()
    try:
        process.ask({"op": "load", "candidate": req.candidate, "extension_path": req.extension_path,
                     "kernels_dir": req.kernels_dir})
        phases.mark("candidate import")
        runner = _RemoteCandidate(req, process, flags)
        # Looked at after the import and after every check, once each.
        disturbed = _judge_disturbed(watch, flags)
        for index, case in enumerate(cases):
            if disturbed:
                break
            result["checks_run"] = index + 1
            runner.last_stats = []
            try:
                stats = runner.run(case)
            except HarnessError as exc:
                _merge_stats(merged, runner.last_stats)
                result["outputs"] = [merged[k] for k in sorted(merged)]
                result["failures"].append({"check": index, "kind": exc.kind, "message": exc.message})
                print(f"check {index} (seed {case.seed}): FAIL [{exc.kind}] {exc.message}")
                raise
            _merge_stats(merged, stats)
            result["outputs"] = [merged[k] for k in sorted(merged)]
            worst = max((s["max_abs_error"] for s in stats), default=0.0)
            result["checks_passed"] += 1
            print(f"check {index} (seed {case.seed}): PASS, max abs error {worst:.3g}")
            cases[index] = None  # its models and tensors are not needed any more
            gc.collect()
            disturbed = _judge_disturbed(watch, flags)
        phases.mark("checks")
        if not disturbed:
            _check_second_shape(runner, shape_case, result)
            phases.mark("second shape")
            _judge_disturbed(watch, flags)
        for part, seconds in runner.seconds.items():
            phases.note("checks and second shape: " + part, seconds)
        result["correct"] = True
    finally:
        result["phase_seconds"] = phases.report()
        # Found even when a check failed: a tampered timer or a fallback matters either way.
        # What the candidate's process reports can only add flags.
        missing = None
        if process.alive():
            try:
                report, _ = process.ask({"op": "report"})
                if not well_formed(report):
                    raise HarnessError(CANDIDATE_RUN, "a malformed report")
                result["torch_ops"] = report.get("torch_ops", {})
                result["extension_calls"] = report.get("extension_calls", {})
                for flag in checked_flags(report.get("flags")):
                    flags.add(flag)
                guard = guard_flag(report, process.guard_requested)
                if guard is not None:
                    flags.add(guard)
            except HarnessError as exc:
                missing = exc.message
        else:
            missing = "the process had ended"
        if missing is not None:
            print(f"the candidate's process gave no report: {missing}")
            # Only a run that passed needs it: a failed one is already rejected.
            if result.get("correct"):
                flags.add(missing_report_flag(missing))
