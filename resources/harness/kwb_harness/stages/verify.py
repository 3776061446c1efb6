"""Stage ``verify``: runs reference and candidate on seeded inputs and compares outputs.

Besides the comparison, every check watches for the ways a candidate can look correct
without computing: torch operators under the guard, the reference's freed output picked up
from the allocator (free memory is poisoned first), inputs modified in place, outputs that
are not plain tensors, answers that change between two runs on the same inputs (reads of
uninitialised memory), threads left running, replaced timers, and kernels baked for the one
test shape (a second, derived shape is verified too).
"""

import gc

from .. import device as devices
from .. import models, values
from ..compare import compare
from ..errors import CUDA_ERROR, OUTPUT_MISMATCH, SECOND_SHAPE_FAILED, HarnessError
from ..integrity import alternate_shape, thread_census
from ..integrity.extension_calls import CallCounter, not_run_flag
from ..integrity.memory_poison import poison_free_memory, tensor_bytes
from ..integrity.namespace_guard import NamespaceSnapshot
from ..integrity.namespace_guard import flags as namespace_flags
from ..integrity.op_guard import fallback_flag, make_guard
from ..task_loader import load_candidate_for, load_reference
from ..timing.phase_clock import PhaseClock
from ..timing.trusted import TrustedClock, tampering_flag
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


def _modified_inputs(given: list, pristine: list) -> list:
    import torch

    return [
        index
        for index, (g, p) in enumerate(zip(flatten(given), flatten(pristine)))
        if isinstance(p, torch.Tensor) and (not isinstance(g, torch.Tensor) or not _same_bits(g, p))
    ]


def _require_plain_outputs(output, expected, flags: _Flags) -> None:
    """Lazy wrappers and tensor subclasses can compute on access or fake comparisons; only a
    plain, materialised torch.Tensor proves the kernel produced the values."""
    import torch

    for index, (c, r) in enumerate(zip(flatten(output), flatten(expected))):
        if isinstance(r, torch.Tensor) and type(c) is not torch.Tensor:
            what = f"{type(c).__module__}.{type(c).__qualname__}"
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


class _CandidateRunner:
    """Runs the candidate on prepared cases, with its integrity probes."""

    def __init__(self, req, task, model_new_cls, guard, counter, flags: _Flags):
        self.req, self.task, self.model_new_cls = req, task, model_new_cls
        self.guard, self.counter, self.flags = guard, counter, flags
        self.forward_calls_into_extension = 0
        self.last_stats = []

    def run(self, case: _ReferenceCase, determinism: bool = True) -> list:
        req, ws = self.req, self.req.workspace
        new_model = models.candidate_model(self.model_new_cls, self.task, case.init, case.ref_model, case.seed,
                                           req.device, ws)
        # Free memory may hold the reference's intermediates (or outputs of earlier checks);
        # poisoned, it cannot pass for a result the candidate never computed.
        poison_free_memory(req.device, tensor_bytes(case.expected))

        given = values.clone(case.inputs)
        before = self.counter.total() if self.counter else 0
        output = models.run_model(new_model, given, req.device, "candidate", ws, self.guard, clone_inputs=False)
        if self.counter:
            self.forward_calls_into_extension += self.counter.total() - before
        _require_plain_outputs(output, case.expected, self.flags)
        modified = _modified_inputs(given, case.inputs)
        if modified:
            self.flags.add({"code": "inputs_modified", "severity": "strict",
                            "reason": f"ModelNew.forward changed its input(s) {modified} in place"})
        comparison = compare(output, case.expected, req.atol, req.rtol)
        # Kept for the caller: a failing check still reports how far off each output was.
        self.last_stats = comparison.stats
        if not comparison.ok:
            raise HarnessError(comparison.kind, comparison.message)

        if determinism:
            # The same inputs again, on freshly poisoned memory: an answer that depends on what
            # happened to be in memory changes, a computed one does not.
            poison_free_memory(req.device, tensor_bytes(output))
            again = models.run_model(new_model, case.inputs, req.device, "candidate", ws, self.guard)
            # Bit-identical is the common case and cheap to establish; only otherwise is the
            # tolerance comparison (float64 copies of both) worth its cost.
            repeat = None if _identical(again, output) else compare(again, output, req.atol, req.rtol)
            if repeat is not None and not repeat.ok:
                self.flags.add({"code": "nondeterministic_output", "severity": "strict",
                                "reason": "two runs on the same inputs disagree (uninitialised memory?): "
                                          + repeat.message})
            del again
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
                return _ReferenceCase(req, task, seed, description), {}
            except HarnessError:
                continue
    return None, {"checked": False, "reason": "the reference does not run on a derived shape"}


def _check_second_shape(runner: _CandidateRunner, case, result: dict) -> None:
    if case is None:
        print("second shape: not checked (" + result["second_shape"]["reason"] + ")")
        return
    try:
        runner.run(case, determinism=False)
    except HarnessError as exc:
        result["second_shape"] = {"checked": True, "passed": False, "description": case.description}
        kind = exc.kind if exc.kind == CUDA_ERROR else SECOND_SHAPE_FAILED
        raise HarnessError(kind, f"on a second input shape ({case.description}): {exc.message}") from None
    result["second_shape"] = {"checked": True, "passed": True, "description": case.description}
    print(f"second shape ({case.description}): PASS")


def check_seeds(req) -> list:
    """One seed per check (the warm worker pre-generates their inputs)."""
    return [req.seed + index * 1000 for index in range(req.checks)]


class VerifyPreparation(Preparation):
    """Everything the reference contributes, computed before the candidate is imported: a
    candidate that later patches torch cannot change what the reference computed. Running the
    reference also starts torch's thread pools and lazy state, so that only the candidate's own
    threads count as new in the thread census."""

    def __init__(self, req):
        super().__init__(req)
        devices.configure(req.device)
        devices.require(req.device)
        devices.synchronize(req.device)  # creates the CUDA context now, so it is timed on its own
        self.phases.mark("cuda context")
        self.task = load_reference(req.reference, req.workspace)
        self.phases.mark("load task")
        self.cases = [_ReferenceCase(req, self.task, seed) for seed in check_seeds(req)]
        self.phases.mark("references")
        self.shape_case, self.second_shape = _second_shape_case(req, self.task, req.seed)
        self.phases.mark("second-shape reference")


def prepare(req) -> VerifyPreparation:
    return VerifyPreparation(req)


def run(req, result: dict, prepared: VerifyPreparation | None = None) -> None:
    result.update(checks_run=0, checks_passed=0, correct=False, outputs=[], failures=[], flags=[],
                  torch_ops={}, extension_calls={}, second_shape={})
    if prepared is None:
        prepared = VerifyPreparation(req)
    prepared.report_into(result)
    # A preparation made ahead of the request is not part of this run's time.
    phases = PhaseClock() if prepared.ahead_of_request else prepared.phases
    clock = TrustedClock()
    flags = _Flags(result)
    task, cases, shape_case = prepared.task, prepared.cases, prepared.shape_case
    result["second_shape"] = dict(prepared.second_shape)
    threads_before = thread_census.snapshot()
    namespace = NamespaceSnapshot()

    counter = CallCounter() if (req.extension_path or req.kernels_dir) else None
    guard = make_guard()
    merged = {}
    try:
        model_new_cls = load_candidate_for(req, counter)
        phases.mark("candidate import")
        runner = _CandidateRunner(req, task, model_new_cls, guard, counter, flags)
        for index, case in enumerate(cases):
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
        phases.mark("checks")
        _check_second_shape(runner, shape_case, result)
        phases.mark("second shape")
        if counter is not None and runner.forward_calls_into_extension == 0:
            flags.add(not_run_flag(counter))
        result["correct"] = True
    finally:
        result["phase_seconds"] = phases.report()
        # Found even when a check failed: a tampered timer or a fallback matters either way.
        result["torch_ops"] = {"compute": dict(guard.compute_ops), "allowed": dict(guard.allowed_ops)}
        if counter is not None:
            result["extension_calls"] = dict(counter.calls)
        flags.add(fallback_flag(guard))
        flags.add(tampering_flag(clock))
        for flag in namespace_flags(namespace) + thread_census.flags_since(threads_before):
            flags.add(flag)
