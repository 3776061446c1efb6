"""Stage ``verify``: runs reference and candidate on seeded inputs and compares outputs."""

import gc

from . import device as devices
from . import models
from .compare import compare
from .errors import HarnessError
from .op_guard import fallback_flag, make_guard
from .task_loader import load_candidate_for, load_reference


def _merge_stats(merged: dict, stats: list) -> None:
    for entry in stats:
        best = merged.get(entry["index"])
        if best is None:
            merged[entry["index"]] = dict(entry)
            continue
        best["max_abs_error"] = max(best["max_abs_error"], entry["max_abs_error"])
        best["max_rel_error"] = max(best["max_rel_error"], entry["max_rel_error"])


def run(req, result: dict) -> None:
    result.update(checks_run=0, checks_passed=0, correct=False, outputs=[], failures=[], flags=[], torch_ops={})
    devices.configure(req.device)
    devices.require(req.device)
    ws = req.workspace
    task = load_reference(req.reference, ws)
    model_new_cls = load_candidate_for(req)

    merged = {}
    guard = make_guard()
    for check in range(req.checks):
        seed = req.seed + check * 1000
        result["checks_run"] = check + 1
        try:
            init = models.init_inputs(task, seed, ws)
            ref_model = models.reference_model(task, init, seed, req.device, ws)
            new_model = models.candidate_model(model_new_cls, task, init, ref_model, seed, req.device, ws)
            inputs = models.make_inputs(task, seed, req.device, ws)
            ref_out = models.run_model(ref_model, inputs, req.device, "reference", ws)
            # Every check is watched, so a candidate cannot compute honestly only on the first.
            new_out = models.run_model(new_model, inputs, req.device, "candidate", ws, guard)
            comparison = compare(new_out, ref_out, req.atol, req.rtol)
        except HarnessError as exc:
            result["failures"].append({"check": check, "kind": exc.kind, "message": exc.message})
            print(f"check {check} (seed {seed}): FAIL [{exc.kind}] {exc.message}")
            raise
        _merge_stats(merged, comparison.stats)
        result["outputs"] = [merged[k] for k in sorted(merged)]
        worst = max((s["max_abs_error"] for s in comparison.stats), default=0.0)
        if not comparison.ok:
            result["failures"].append({"check": check, "kind": comparison.kind, "message": comparison.message})
            print(f"check {check} (seed {seed}): FAIL [{comparison.kind}] {comparison.message}")
            raise HarnessError(comparison.kind, f"check {check}: {comparison.message}")
        result["checks_passed"] += 1
        result["torch_ops"] = {"compute": dict(guard.compute_ops), "allowed": dict(guard.allowed_ops)}
        print(f"check {check} (seed {seed}): PASS, max abs error {worst:.3g}")
        # Large tasks would otherwise hold two models and all outputs of the previous check
        # while the next one is built.
        del ref_model, new_model, inputs, ref_out, new_out
        gc.collect()
    flag = fallback_flag(guard)
    if flag:
        result["flags"].append(flag)
        print("flag [strict] torch_fallback: " + flag["reason"])
    result["correct"] = True
