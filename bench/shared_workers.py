#!/usr/bin/env python3
"""Evaluations of distinct workspaces through one `kwb serve` daemon, with warm workers shared
across workspaces (KWB_SHARED_WORKERS on, the default where the kernel offers Landlock) and with
one worker per workspace (off).

A rollout or a KernelBench sweep evaluates a stream of workspaces that each appear once or a few
times. With a worker per workspace, each one pays the server's start (Python, the torch import,
warming the stage modules) before its first stage. This script creates N workspaces of bundled
tasks side by side, evaluates each once per mode (inspect and verify: `--no-profile`, so the
baseline cache that the first mode fills cannot favour the second; the candidate is the reference
renamed, which verification passes), and prints each evaluation's wall-clock and worker starts.

    bench/shared_workers.py [--kwb build/release/app/cli/kwb] [--count 6] [--device cpu]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

TASKS = ["01_gelu", "07_scale_residual_add", "03_softmax", "08_rmsnorm_silu", "02_sum_reduction",
         "04_layernorm"]


def run(argv, env, check=True):
    done = subprocess.run(argv, env=env, capture_output=True, text=True)
    if check and done.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kwb", default="build/release/app/cli/kwb")
    parser.add_argument("--count", type=int, default=6)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    kwb = os.path.abspath(args.kwb)
    tasks = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "resources", "tasks")
    root = tempfile.mkdtemp(prefix="kwb-shared-workers-")
    rows = []
    try:
        for mode in ("off", "on"):
            env = dict(os.environ, KWB_SHARED_WORKERS=mode)
            # A daemon of this configuration started fresh: no warm worker from an earlier run.
            run([kwb, "serve", "stop"], env, check=False)
            folder = os.path.join(root, mode)
            os.makedirs(folder)
            for index in range(args.count):
                task = TASKS[index % len(TASKS)]
                workspace = os.path.join(folder, f"episode_{index}_{task}")
                run([kwb, "workspace", "init", os.path.join(tasks, task + ".py"), workspace], env)
                # A candidate that computes what the reference does (with torch operators: the
                # integrity check rejects it, but inspect and verify do all their work).
                with open(os.path.join(workspace, "model.py")) as f:
                    reference = f.read()
                with open(os.path.join(workspace, "model_new.py"), "w") as f:
                    f.write(reference.replace("class Model(", "class ModelNew("))
                started = time.monotonic()
                done = run([kwb, "eval", workspace, "--serve", "on", "--profile", "rl",
                            "--device", args.device, "--no-profile", "--json"], env, check=False)
                wall = time.monotonic() - started
                try:
                    record = json.loads(done.stdout)
                except ValueError:
                    sys.exit(f"kwb eval printed no record:\n{done.stdout}\n{done.stderr}")
                stages = record.get("stages", [])
                worker_started = any(s.get("worker_started") for s in stages)
                rows.append({"mode": mode, "task": task, "wall_s": round(wall, 2),
                             "correct": record.get("correct"),
                             "worker_started": worker_started,
                             "stages": {s.get("name"): round(s.get("seconds", 0), 2) for s in stages}})
                print(json.dumps(rows[-1]), flush=True)
            run([kwb, "serve", "stop"], env, check=False)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    for mode in ("off", "on"):
        walls = [r["wall_s"] for r in rows if r["mode"] == mode]
        starts = sum(r["worker_started"] for r in rows if r["mode"] == mode)
        print(f"shared workers {mode}: {len(walls)} workspaces, worker starts {starts}, "
              f"wall median {statistics.median(walls):.2f} s, total {sum(walls):.1f} s, "
              f"all correct: {all(r['correct'] for r in rows if r['mode'] == mode)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
