#!/usr/bin/env python3
"""What a stage process pays to start with and without the engine's bytecode cache.

    bench/bytecode_cache_start.py [PYTHON] [REPEATS]

Starts PYTHON (default: this interpreter) through the stages' bootstrap (resources/harness/
kwb_stage.py, -I -B as a stage) and times `import torch` plus the operator guard's warm-up
(candidate_process.warm_before_fork, what a cold verify stage does first) three ways:
  empty cache   KWB_BYTECODE_CACHE names an empty folder: every installation module is compiled
                from source, as on a host whose site-packages ship no .pyc (the H100 host's torch)
  filled cache  the same folder after kwb_harness.bytecode_fill filled it (the engine's fill)
  no cache      the installation's own __pycache__ (where pip wrote it)
HOME and TMPDIR point at a scratch folder, as in a stage, so that an installation below the
user's HOME counts as the installation. Prints a table for bench/results.
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HARNESS = os.path.join(REPO, "resources", "harness")
BOOTSTRAP = os.path.join(HARNESS, "kwb_stage.py")
PROBE = (
    "import time, sys\n"
    "t = time.perf_counter()\n"
    "import torch\n"
    "a = time.perf_counter() - t\n"
    "from kwb_harness.isolation import candidate_process\n"
    "candidate_process.warm_before_fork()\n"
    "print(f'{a:.3f} {time.perf_counter() - t:.3f}')\n"
)


def stage(python: str, scratch: str, cache: str, write: bool = False, module: str = "kwb_bench_probe"):
    env = dict(os.environ, HOME=scratch, TMPDIR=scratch, PYTHONPATH=scratch, CUDA_VISIBLE_DEVICES="")
    env.pop("KWB_BYTECODE_CACHE", None)
    if cache:
        env["KWB_BYTECODE_CACHE"] = cache
    # The fill as the engine runs it (-I); the probe without -I, which would drop PYTHONPATH and
    # with it the probe module (-B as a stage; the bootstrap's policy is the same either way).
    flags = ["-I", "-u"] if write else ["-B", "-u"]
    started = time.perf_counter()
    done = subprocess.run([python, *flags, BOOTSTRAP, module], cwd=scratch, env=env, capture_output=True,
                          text=True, timeout=900)
    if done.returncode != 0:
        sys.exit(f"{module} failed: {done.stderr[-2000:]}")
    return done.stdout.strip().splitlines()[-1], time.perf_counter() - started


def main() -> int:
    python = sys.argv[1] if len(sys.argv) > 1 else sys.executable
    if os.sep in python:
        python = os.path.abspath(python)  # the probes run from a scratch folder
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    scratch = tempfile.mkdtemp(prefix="kwb-bytecode-bench-")
    with open(os.path.join(scratch, "kwb_bench_probe.py"), "w") as f:
        f.write(PROBE)
    empty = tempfile.mkdtemp(prefix="kwb-bytecode-empty-")
    filled = tempfile.mkdtemp(prefix="kwb-bytecode-filled-")
    print(f"date: {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}, host: {os.cpu_count()} cores, python: {python}")
    report, fill_s = stage(python, scratch, filled, write=True, module="kwb_harness.bytecode_fill")
    pyc = sum(len([n for n in names if n.endswith(".pyc")]) for _, _, names in os.walk(filled))
    print(f"fill: {fill_s:.1f} s wall, {pyc} .pyc files ({report})")
    print("| bytecode | import torch s (median) | + guard warm-up s (median) | process wall s (median) |")
    print("|---|---|---|---|")
    for label, cache in (("empty cache", empty), ("filled cache", filled), ("no cache", "")):
        rows = [stage(python, scratch, cache) for _ in range(repeats)]
        torch_s = statistics.median(float(r[0].split()[0]) for r in rows)
        warm_s = statistics.median(float(r[0].split()[1]) for r in rows)
        wall_s = statistics.median(r[1] for r in rows)
        print(f"| {label} | {torch_s:.2f} | {warm_s:.2f} | {wall_s:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
