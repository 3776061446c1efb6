#!/usr/bin/env python3
"""The rollout benchmark's report (bench/gpu_rollout.sh): Markdown on stdout.

    bench/rollout_report.py --store STORE --metrics METRICS.json --wall SECONDS
        [--gpu-samples CSV] [--anchor ANCHOR.json] [--anchor-gpu-samples CSV]

Evaluations are the run's evaluation events (each Verify and Profile tool call and each final
evaluation);
evaluations per GPU-minute divide them by the rollout's wall time on its one GPU, everything
included (extension builds, baselines, the model's turns). The anchor's rate divides its
candidates by the GPU phase of bench/cuda_agent_scripts.py (verification + profiling; its
compiles ran before, off the GPU). Stage times come from each evaluation's record.
"""

import argparse
import collections
import json
import os
import sqlite3
import statistics


def utilization(path):
    """(mean GPU utilization %, samples) of an nvidia-smi CSV, or None."""
    if not path or not os.path.exists(path):
        return None
    values = []
    with open(path) as f:
        for line in f:
            parts = [p.strip() for p in line.split(",")]
            if len(parts) >= 2 and parts[1].replace(".", "", 1).isdigit():
                values.append(float(parts[1]))
    return (statistics.mean(values), len(values)) if values else None


def figure(value, digits=2):
    return "-" if value is None else f"{value:.{digits}f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", required=True)
    parser.add_argument("--metrics", required=True)
    parser.add_argument("--wall", type=float, required=True, help="the rollout's seconds, all calls together")
    parser.add_argument("--gpu-samples", default="")
    parser.add_argument("--anchor", default="")
    parser.add_argument("--anchor-gpu-samples", default="")
    args = parser.parse_args()
    wall = args.wall

    db = sqlite3.connect(args.store)
    episodes = db.execute("SELECT status, reward FROM episodes ORDER BY id").fetchall()
    evaluations = [json.loads(payload) for (payload,) in
                   db.execute("SELECT payload FROM events WHERE kind = 'evaluation'")]

    stage_seconds = collections.defaultdict(list)
    # Of each stage's seconds: waiting for a GPU lane, for a build slot, and the rest of its start
    # (sandbox, process or warm worker, request and result files).
    # Then, inside a timing stage, its wait for the lane alone when it reached its timed calls.
    waits = collections.defaultdict(lambda: [0.0, 0.0, 0.0, 0.0])
    totals = []
    for evaluation in evaluations:
        totals.append(evaluation.get("total_seconds") or 0.0)
        for stage in evaluation.get("stages", []):
            if isinstance(stage.get("seconds"), (int, float)):
                name = stage.get("name", "?")
                stage_seconds[name].append(stage["seconds"])
                lane = stage.get("lane_wait_seconds") or 0.0
                build = stage.get("build_wait_seconds") or 0.0
                waits[name][0] += lane
                waits[name][1] += build
                waits[name][2] += max(0.0, (stage.get("start_seconds") or 0.0) - lane - build)
                waits[name][3] += stage.get("alone_lane_wait_seconds") or 0.0
    with open(args.metrics) as f:
        metrics = json.load(f)
    overall = metrics.get("overall", {})

    print(f"## kwb rollout: {len(episodes)} episodes, {len(evaluations)} evaluations in {wall:.1f} s")
    statuses = collections.Counter(status for status, _ in episodes)
    rewards = collections.Counter(reward for _, reward in episodes)
    print(f"- statuses: {dict(statuses)}; final rewards: {dict(sorted(rewards.items(), key=str))}")
    rate = len(evaluations) / (wall / 60) if wall > 0 else None
    print(f"- evaluations per GPU-minute (wall, everything included): **{figure(rate)}**; "
          f"episodes per minute: {figure(len(episodes) / (wall / 60) if wall > 0 else None)}")
    # The anchor's basis: only the stages that hold the GPU (verification and profiling).
    gpu_stage_seconds = sum(sum(stage_seconds.get(name, [])) for name in ("verify", "profile"))
    stage_rate = len(evaluations) / (gpu_stage_seconds / 60) if gpu_stage_seconds > 0 else None
    print(f"- evaluations per minute of GPU stages (verify + profile, the anchor's basis): "
          f"{figure(stage_rate)}")
    util = utilization(args.gpu_samples)
    if util:
        print(f"- GPU utilization (nvidia-smi, every 0.5 s): mean {util[0]:.1f} % over {util[1]} samples")
    keys = ("scored", "pass_rate", "faster_than_eager_rate", "faster_than_compile_rate", "geomean_speedup_vs_eager",
            "geomean_speedup_vs_compile", "fast_p_vs_eager", "mean_reward", "reward_counts", "hack_flag_rate",
            "gpu_seconds_per_evaluation")
    print("- metrics (overall): " + ", ".join(f"{k} {overall[k]}" for k in keys if k in overall))
    for name, level in sorted(metrics.get("by_level", {}).items()):
        print(f"  - level {name}: " + ", ".join(f"{k} {level[k]}" for k in keys if k in level))
    if totals:
        print(f"- evaluation total_seconds: median {statistics.median(totals):.2f}, sum {sum(totals):.1f} "
              f"(evaluations overlap: {sum(totals) / wall:.1f} at a time on average)")
    print()
    print("| stage | evaluations | median s | sum s | share of all stage time | of which lane wait s | "
          "build-slot wait s | other start s | wait for the lane alone s |")
    print("|---|---|---|---|---|---|---|---|---|")
    everything = sum(sum(v) for v in stage_seconds.values()) or 1.0
    for name, values in sorted(stage_seconds.items(), key=lambda kv: -sum(kv[1])):
        lane, build, start, alone = waits[name]
        print(f"| {name} | {len(values)} | {statistics.median(values):.2f} | {sum(values):.1f} | "
              f"{100 * sum(values) / everything:.1f} % | {lane:.1f} | {build:.1f} | {start:.1f} | {alone:.1f} |")

    if args.anchor and os.path.exists(args.anchor):
        with open(args.anchor) as f:
            anchor = json.load(f)
        summary = anchor["summary"]
        print()
        print(f"## Anchor: the workspace's scripts, one process per tool call ({summary['candidates']} candidates)")
        print(f"- compiles ({summary['compile_jobs']} at a time, off the GPU): {summary['compile_wall_s']:.1f} s; "
              f"verification + profiling one at a time: {summary['gpu_wall_s']:.1f} s; "
              f"{summary['passed']} of {summary['evaluated']} passed")
        print(f"- evaluations per GPU-minute (verification + profiling only): "
              f"**{figure(summary['evaluations_per_gpu_minute'])}**; with the compiles' wall: "
              f"{figure(summary['evaluations_per_minute_with_compiles'])}")
        util = utilization(args.anchor_gpu_samples)
        if util:
            print(f"- GPU utilization over the anchor (compiles included): mean {util[0]:.1f} %")
        print()
        print("| candidate | compile s | verification s | profiling s | speed-up vs eager | vs compile |")
        print("|---|---|---|---|---|---|")
        for row in anchor["candidates"]:
            print(f"| {row['task']} | {figure(row.get('compile_s'), 1)} | {figure(row.get('verify_s'), 1)} | "
                  f"{figure(row.get('profile_s'), 1)} | {figure(row.get('speedup_eager'))} | "
                  f"{figure(row.get('speedup_compile'))} |")
        anchor_rate = summary.get("evaluations_per_gpu_minute")
        if summary["passed"] < summary["evaluated"]:
            # A failed verification ends early and skips what a passing one times: its rate is
            # not the anchor's, and a ratio against it would flatter kwb.
            print()
            print(f"**no ratio against the anchor**: {summary['evaluated'] - summary['passed']} of its "
                  f"{summary['evaluated']} honest candidates failed (see the tails in the anchor's JSON)")
        elif rate and anchor_rate:
            print()
            print(f"**kwb rollout / anchor, evaluations per GPU-minute: {rate / anchor_rate:.1f}x** "
                  f"(kwb: the rollout's whole wall, builds and baselines included; the anchor: its "
                  f"GPU phase only, its compiles not counted)")
            if stage_rate:
                print(f"- on the same basis for both (GPU stages only): {stage_rate / anchor_rate:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
