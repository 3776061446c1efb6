#!/usr/bin/env python3
"""The anchor of the rollout benchmark: the same candidates evaluated the way CUDA Agent's agent
evaluates them, with the workspace's own scripts, one fresh process per tool call:

    bash utils/compile.sh; python3 -m utils.verification; python3 -m utils.profiling

(compile: the torch extension from kernels/*; verification: 5 checks on fresh inputs; profiling:
eager, torch.compile and ModelNew timed after warm-up). CUDA Agent compiled in CPU sandboxes and
ran verification and profiling on its GPUs, so here the compiles run --jobs at a time before any
GPU work and only verification + profiling count as GPU time; they run one at a time, as one
evaluation per GPU.

    bench/cuda_agent_scripts.py --kwb KWB --tasks OUT/KernelBench --solutions OUT/solutions \\
        --work DIR [--only STEM,STEM] [--jobs 8] [--device cuda] [--out anchor.json]

Prints one line per candidate and a summary; --out keeps every timing.
"""

import argparse
import concurrent.futures
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time


def timed(command, cwd, env, timeout):
    started = time.time()
    try:
        proc = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
        return proc.returncode, proc.stdout + proc.stderr, time.time() - started
    except subprocess.TimeoutExpired as e:
        return -9, f"timed out after {timeout} s: {(e.stdout or b'')[-2000:]!r}", time.time() - started


def prepare(kwb, task, solution, workspace):
    shutil.rmtree(workspace, ignore_errors=True)
    subprocess.run([kwb, "workspace", "init", task, workspace], check=True, capture_output=True)
    for root, _, names in os.walk(solution):
        for name in names:
            source = os.path.join(root, name)
            target = os.path.join(workspace, os.path.relpath(source, solution))
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copyfile(source, target)


def speedup(text, base):
    m = re.search(rf"speed-up vs {base}: ([0-9.]+)x", text)
    return float(m.group(1)) if m else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kwb", required=True)
    parser.add_argument("--tasks", required=True, help="a KernelBench-style folder (levelN/*.py)")
    parser.add_argument("--solutions", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--only", default="")
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--timeout", type=int, default=300)
    parser.add_argument("--out", default="")
    args = parser.parse_args()

    tasks = sorted(glob.glob(os.path.join(args.tasks, "level*", "*.py")))
    only = [s for s in args.only.split(",") if s]
    if only:
        tasks = [t for t in tasks if os.path.basename(t)[:-3] in only]
    env = dict(os.environ, KWB_PYTHON=args.python, KWB_DEVICE=args.device, PYTHONUNBUFFERED="1")
    rows = []
    for task in tasks:
        stem = os.path.basename(task)[:-3]
        workspace = os.path.join(args.work, stem)
        prepare(args.kwb, task, os.path.join(args.solutions, stem), workspace)
        rows.append({"task": stem, "workspace": workspace})

    started = time.time()
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {pool.submit(timed, ["bash", "utils/compile.sh", "--device", args.device], row["workspace"], env,
                               args.timeout): row for row in rows}
        for future in concurrent.futures.as_completed(futures):
            row = futures[future]
            row["compile_rc"], text, row["compile_s"] = future.result()
            if row["compile_rc"] != 0:
                row["compile_tail"] = text[-1500:]
    compile_wall = time.time() - started

    gpu_started = time.time()
    for row in rows:
        if row["compile_rc"] != 0:
            print(f"{row['task']}: compile failed ({row['compile_s']:.1f} s)\n{row['compile_tail']}", flush=True)
            continue
        row["verify_rc"], verify_text, row["verify_s"] = timed(
            [args.python, "-m", "utils.verification", "--device", args.device], row["workspace"], env, args.timeout)
        row["profile_rc"], profile_text, row["profile_s"] = timed(
            [args.python, "-m", "utils.profiling", "--device", args.device], row["workspace"], env, args.timeout)
        row["speedup_eager"] = speedup(profile_text, "eager")
        row["speedup_compile"] = speedup(profile_text, "compile")
        if row["verify_rc"] != 0 or row["profile_rc"] != 0:
            row["tail"] = (verify_text[-800:] + "\n" + profile_text[-800:])
        print(f"{row['task']}: compile {row['compile_s']:.1f} s (rc {row['compile_rc']}), verification "
              f"{row['verify_s']:.1f} s (rc {row['verify_rc']}), profiling {row['profile_s']:.1f} s "
              f"(rc {row['profile_rc']}), speed-up vs eager {row['speedup_eager']}, vs compile "
              f"{row['speedup_compile']}", flush=True)
        if "tail" in row:
            print(row["tail"], flush=True)
    gpu_wall = time.time() - gpu_started

    evaluated = [r for r in rows if r.get("profile_rc") is not None]
    passed = [r for r in evaluated if r["verify_rc"] == 0 and r["profile_rc"] == 0]
    summary = {
        "candidates": len(rows), "evaluated": len(evaluated), "passed": len(passed),
        "compile_wall_s": compile_wall, "compile_jobs": args.jobs,
        "gpu_wall_s": gpu_wall,
        "evaluations_per_gpu_minute": len(evaluated) / (gpu_wall / 60) if gpu_wall > 0 else None,
        "evaluations_per_minute_with_compiles": len(evaluated) / ((compile_wall + gpu_wall) / 60)
        if evaluated else None,
    }
    print("summary: " + json.dumps(summary), flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"summary": summary, "candidates": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
