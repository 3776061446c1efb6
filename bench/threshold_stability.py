#!/usr/bin/env python3
"""Milestone stability at the threshold itself (issue 16, item 6): one candidate evaluated
REPEATS times per profile with the milestone threshold set to the candidate's own speed-up over
torch.compile, the case where a decision made from one noisy number flips most.

    bench/threshold_stability.py --kwb KWB [--task 07_scale_residual_add] [--device cuda]
        [--profiles rl,cuda-agent] [--repeats 20] [--out FILE.jsonl]

The bundled task's solution goes into a fresh workspace. Per profile, a first evaluation in that
profile gives the candidate's median speed-up over torch.compile, which becomes `--threshold` for
the profile's repeats (the milestone over eager, far above it for the default task, stays paid);
where the candidate does not beat torch.compile, its speed-up over eager does, and the eager
milestone is the one on edge. The calibration is the profile's own: each profile times and caches
its own baselines, and on an H100 (2026-12-07) the rl profile's torch.compile time for
07_scale_residual_add was 3.3x the cuda-agent profile's, so an rl calibration put the cuda-agent
threshold nowhere near its edge. Each repeat records the reward, the speed-ups with their
intervals and the reason; the summary says how often the most common milestone came out per
profile. Through `kwb serve` when it runs (the default).
"""

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def evaluate(kwb, workspace, device, profile, threshold=None):
    command = [kwb, "eval", workspace, "--device", device, "--profile", profile, "--json"]
    if threshold:
        command += ["--threshold", f"{threshold:.4f}"]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - started
    try:
        record = json.loads(done.stdout)
    except json.JSONDecodeError:
        return {"wall_s": wall, "error": (done.stderr or done.stdout)[-600:]}
    speedup = record.get("speedup", {})
    return {"wall_s": wall, "reward": record.get("reward"), "reason": record.get("reward_reason"),
            "vs_eager": speedup.get("vs_eager"), "vs_compile": speedup.get("vs_compile"),
            "vs_eager_interval": speedup.get("vs_eager_interval"),
            "vs_compile_interval": speedup.get("vs_compile_interval"),
            "flags": [f"{f.get('severity', '')[:1]}:{f.get('code')}" for f in record.get("flags", [])]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kwb", required=True)
    parser.add_argument("--task", default="07_scale_residual_add")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--profiles", default="rl,cuda-agent")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--out", default="")
    args = parser.parse_args()

    workspace = os.path.join(tempfile.mkdtemp(prefix="kwb-threshold-"), args.task)
    subprocess.run([args.kwb, "workspace", "init", os.path.join(REPO, "resources", "tasks", args.task + ".py"),
                    workspace, "--with-solution"], check=True, capture_output=True)
    out = open(args.out, "a") if args.out else None

    for profile in filter(None, args.profiles.split(",")):
        first = evaluate(args.kwb, workspace, args.device, profile)
        first.update(profile=profile, calibration=True)
        print(f"{profile} calibration: " + json.dumps(first), flush=True)
        if out:
            out.write(json.dumps(first) + "\n")
            out.flush()
        # The threshold sits on the highest milestone the candidate reaches: torch.compile's where
        # it beats it (on some GPUs torch.compile is out of reach for every bundled solution),
        # else eager's.
        threshold, against = first.get("vs_compile"), "torch.compile"
        if not threshold or threshold <= 1.0:
            threshold, against = first.get("vs_eager"), "eager"
        if not threshold or threshold <= 1.0:
            print(f"{profile}: the candidate is not faster than eager ({threshold}): no threshold above 1 "
                  "to sit on")
            return 1
        print(f"{profile} threshold: {threshold:.4f} (the candidate's speed-up over {against})", flush=True)
        rewards = []
        for repeat in range(args.repeats):
            result = evaluate(args.kwb, workspace, args.device, profile, threshold)
            result.update(profile=profile, repeat=repeat, threshold=threshold)
            rewards.append(result.get("reward"))
            print(json.dumps(result), flush=True)
            if out:
                out.write(json.dumps(result) + "\n")
                out.flush()
        counts = collections.Counter(rewards)
        top, times = counts.most_common(1)[0]
        print(f"{profile}: rewards {dict(counts)}; the same milestone ({top}) {times} of {len(rewards)} times",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
