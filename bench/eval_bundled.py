#!/usr/bin/env python3
"""Evaluates every bundled task with its reference solution through `kwb eval`, then edits one
.cu file and evaluates again (the incremental-compile path), and prints a Markdown table.

    python3 bench/eval_bundled.py --kwb build/gpu-host/app/cli/kwb [--out results.json]

Run it on a GPU host after tools/gpu-host-build.sh; on a CPU machine it runs in CPU mode.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_eval(kwb, workspace, extra):
    start = time.time()
    proc = subprocess.run([kwb, "eval", workspace, "--json", *extra], capture_output=True, text=True)
    wall = time.time() - start
    try:
        record = json.loads(proc.stdout)
    except json.JSONDecodeError:
        record = {"reward": None, "verdict": "no JSON: " + proc.stderr[-400:]}
    record["wall_s"] = wall
    return record


def stage_seconds(record, name):
    for stage in record.get("stages", []):
        if stage["name"] == name:
            return stage["seconds"]
    return float("nan")


def timing(record, variant):
    t = record.get("timings", {}).get(variant, {})
    if not t.get("available"):
        return "n/a"
    spread = 100.0 * t["stdev_ms"] / t["median_ms"] if t["median_ms"] else 0.0
    text = "%.4f ±%.1f%%" % (t["median_ms"], spread)
    if t.get("rounds"):
        # Repeat-until-stable: the spread of the per-round medians is what the reward relies on.
        text += " (rounds %d, medians ±%.1f%%)" % (t["rounds"], 100.0 * t.get("round_cv", 0.0))
    return text


def flags(record):
    return ", ".join("%s:%s" % (f["severity"][0], f["code"]) for f in record.get("flags", [])) or "none"


def edit_one_kernel(workspace):
    kernels = sorted(glob.glob(os.path.join(workspace, "kernels", "*.cu")))
    with open(kernels[0], "a") as f:
        f.write("\n// benchmark edit %f\n" % time.time())
    return os.path.relpath(kernels[0], workspace)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kwb", required=True)
    parser.add_argument("--out")
    parser.add_argument("--iterations", default="50")
    parser.add_argument("--tasks", default="", help="comma-separated task ids (default: all with a solution)")
    parser.add_argument("--precompile", type=int, default=0,
                        help="first compile+verify N workspaces at once (fills the build caches; no timing)")
    parser.add_argument("--edit-tasks", type=int, default=1000, help="re-evaluate after a .cu edit for the first N tasks")
    args = parser.parse_args()

    root = tempfile.mkdtemp(prefix="kwb-bench-")
    selected = []
    for task in sorted(glob.glob(os.path.join(REPO, "resources", "tasks", "*.py"))):
        task_id = os.path.splitext(os.path.basename(task))[0]
        if not os.path.isdir(os.path.join(REPO, "resources", "solutions", task_id)):
            continue
        if args.tasks and task_id not in args.tasks.split(","):
            continue
        ws = os.path.join(root, task_id)
        subprocess.run([args.kwb, "workspace", "init", task, ws, "--with-solution"], check=True, capture_output=True)
        selected.append((task_id, ws))

    cold = {}
    if args.precompile:
        from concurrent.futures import ThreadPoolExecutor
        start = time.time()
        with ThreadPoolExecutor(args.precompile) as pool:
            for (task_id, _), record in zip(selected, pool.map(lambda item: run_eval(args.kwb, item[1], ["--no-profile"]), selected)):
                cold[task_id] = record
        print("precompiled %d workspaces in parallel in %.1f s" % (len(selected), time.time() - start), flush=True)
        for task_id, record in cold.items():
            print("  %s: cold compile %.1f s, verify %.1f s, %s" % (task_id, stage_seconds(record, "compile"),
                  stage_seconds(record, "verify"), record.get("verdict", "")[:80]), flush=True)

    rows, records = [], []
    for index, (task_id, ws) in enumerate(selected):
        first = run_eval(args.kwb, ws, ["--iterations", args.iterations, "--refresh-baselines"])
        edited, second = None, {"wall_s": float("nan")}
        if index < args.edit_tasks:
            edited = edit_one_kernel(ws)
            second = run_eval(args.kwb, ws, ["--iterations", args.iterations])
        records.append({"task": task_id, "cold": cold.get(task_id), "first": first, "after_edit": second, "edited": edited})
        rows.append("| %s | %s | %s | %s | %s | %s | %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |" % (
            task_id, first.get("reward"), first.get("verdict", "")[:60], flags(first),
            timing(first, "eager"), timing(first, "compile"), timing(first, "candidate"),
            stage_seconds(first, "inspect"), stage_seconds(first, "compile"), stage_seconds(first, "verify"),
            stage_seconds(first, "profile"), first["wall_s"], stage_seconds(second, "compile"), second["wall_s"]))
        print(rows[-1], flush=True)
    shutil.rmtree(root, ignore_errors=True)

    print()
    print("| task | reward | verdict | flags | eager ms | compile ms | candidate ms | inspect s | compile s | verify s | profile s | total s | compile s after 1 .cu edit | total s after edit |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(row)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(records, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
