#!/usr/bin/env python3
"""The judge's clock on the bundled solutions in CPU mode, alone and two at a time as ctest -j2
runs them in CI: how much of each batch an honest solution leaves unexplained, how much waiting
for a CPU the judge excused, and the calibrated digest cost (timing/external_clock.py).

    python3 bench/external_clock_bundled.py --kwb build/release/app/cli/kwb [--runs 3]
        [--tasks 03_softmax,04_layernorm] [--neighbour 05_gemm_bias_relu]

Uses the CI's short timing settings (2 checks, 4 iterations, 2 rounds) and prints a Markdown table.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SETTINGS = ["--device", "cpu", "--checks", "2", "--iterations", "4", "--max-rounds", "2", "--json", "--serve", "off"]


def _workspace(kwb: str, task: str, parent: str) -> str:
    path = os.path.join(parent, task)
    subprocess.run([kwb, "workspace", "init", os.path.join(ROOT, "resources", "tasks", task + ".py"), path],
                   check=True, stdout=subprocess.DEVNULL)
    solution = os.path.join(ROOT, "resources", "solutions", task)
    shutil.copytree(solution, path, dirs_exist_ok=True)
    return path


def _start(kwb: str, workspace: str) -> subprocess.Popen:
    env = dict(os.environ, KWB_RESOURCES=os.path.join(ROOT, "resources"))
    return subprocess.Popen([kwb, "eval", workspace, *SETTINGS], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env=env, text=True)


def _row(task: str, load: str, output: str) -> str:
    try:
        record = json.loads(output)
    except json.JSONDecodeError:
        return f"| {task} | {load} | no record | | | | | | | | |"
    timing = record.get("integrity", {}).get("external_timing", {})
    log = next((s.get("log", "") for s in record.get("stages", []) if s.get("name") == "profile"), "")
    digest = re.search(r"output digest ([0-9.]+) ms", log)
    flags = ",".join(f["code"] for f in record.get("flags", [])) or "-"
    return (f"| {task} | {load} | {record.get('reward')} | {flags} | {timing.get('batches', 0)} | "
            f"{timing.get('inconsistent_batches', 0)} | {timing.get('wall_ms', 0):.1f} | "
            f"{timing.get('unexplained_ms', 0):.1f} | {timing.get('allowed_ms', 0):.1f} | "
            f"{timing.get('scheduler_wait_ms', 0):.1f} / {timing.get('scheduler_wait_excused_ms', 0):.1f} | "
            f"{digest.group(1) if digest else '?'} |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kwb", required=True)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tasks", default="03_softmax,04_layernorm")
    parser.add_argument("--neighbour", default="05_gemm_bias_relu")
    args = parser.parse_args()
    kwb = os.path.abspath(args.kwb)
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    print(f"date: {time.strftime('%Y-%m-%d %H:%M:%S %Z')}; cores: {os.cpu_count()}; commit {commit}")
    print("| task | load | reward | flags | batches | over | wall ms | unexplained ms | allowed ms | "
          "waiting / excused ms | digest ms |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as parent:
        neighbour = _workspace(kwb, args.neighbour, parent)
        for task in args.tasks.split(","):
            workspace = _workspace(kwb, task, parent)
            for _ in range(args.runs):
                print(_row(task, "alone", _start(kwb, workspace).communicate()[0]), flush=True)
                beside = _start(kwb, neighbour)
                output = _start(kwb, workspace).communicate()[0]
                beside.communicate()
                print(_row(task, "beside " + args.neighbour, output), flush=True)


if __name__ == "__main__":
    main()
