#!/usr/bin/env bash
# CUPTI overhead: the candidate's median time with and without the injection library, on bundled
# tasks with their reference solutions, in the same evaluation pipeline (`kwb eval` against
# `kwb timeline`, same timing settings), alternating the two so drift hits both alike.
#
#   bench/cupti_overhead.sh [REPEATS] [TASK...]        (defaults: 3; 07_scale_residual_add 05_gemm_bias_relu)
#
# Needs a GPU host set up like the other bench/gpu_*.sh runs (bench/gpu_host_env.sh). Prints a
# markdown table; raw JSON goes to $KWB_BENCH_OUT (default: a temporary folder, printed).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/gpu_host_env.sh"
repeats="${1:-3}"
shift || true
tasks=("$@")
[ ${#tasks[@]} -eq 0 ] && tasks=(07_scale_residual_add 05_gemm_bias_relu)
out="${KWB_BENCH_OUT:-$(mktemp -d /tmp/kwb-cupti-bench.XXXXXX)}"
mkdir -p "$out"

configure_gpu_host_build
cmake --build "$build" --target kwb kwb_cupti_inject 2>&1 | grep -E "error|FAILED" | head -20 || true
kwb="$build/app/cli/kwb"
python="${KWB_PYTHON:-$(command -v python3)}"
timing=(--device cuda --iterations 50 --max-rounds 5)

for task in "${tasks[@]}"; do
    ws="$out/ws-$task"
    "$kwb" workspace init "$repo/resources/tasks/$task.py" "$ws" --with-solution --force >/dev/null
    # One untimed evaluation first: builds the extension and warms the caches for both sides.
    "$kwb" eval "$ws" --python "$python" --json "${timing[@]}" >"$out/$task-warm.json" || true
    for ((i = 1; i <= repeats; i++)); do
        echo "[$task] round $i/$repeats" >&2
        "$kwb" eval "$ws" --python "$python" --json "${timing[@]}" >"$out/$task-plain-$i.json" || true
        "$kwb" timeline "$ws" --python "$python" --out "$out/$task-trace-$i.json" \
            --records "$out/$task-records-$i.jsonl" --iterations 50 --json-summary \
            >"$out/$task-cupti-$i.json" || true
    done
done

echo "raw results: $out" >&2
python3 - "$out" "$repeats" "${tasks[@]}" <<'PY'
import json, statistics, sys
out, repeats, tasks = sys.argv[1], int(sys.argv[2]), sys.argv[3:]

def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None

print("| task | candidate without CUPTI (ms) | with CUPTI (ms) | overhead | kernels recorded | dropped |")
print("| --- | ---: | ---: | ---: | ---: | ---: |")
for task in tasks:
    plain, cupti, kernels, dropped = [], [], [], []
    for i in range(1, repeats + 1):
        p = load(f"{out}/{task}-plain-{i}.json")
        c = load(f"{out}/{task}-cupti-{i}.json")
        if p and p.get("timings", {}).get("candidate", {}).get("available"):
            plain.append(p["timings"]["candidate"]["median_ms"])
        if c and c.get("candidate_median_ms", 0) > 0:
            cupti.append(c["candidate_median_ms"])
            kernels.append(c["kernel_count"])
            dropped.append(c["dropped"]["total"])
    if not plain or not cupti:
        print(f"| {task} | {len(plain)} runs | {len(cupti)} runs | n/a | | |")
        continue
    a, b = statistics.median(plain), statistics.median(cupti)
    print(f"| {task} | {a:.4f} | {b:.4f} | {100 * (b - a) / a:+.1f}% | {int(statistics.median(kernels))} | {max(dropped)} |")
print(f"\nMedians over {repeats} alternating runs each; every run is the median of 50 timed calls "
      "(CUDA events, L2 flushed), so the overhead is what CUPTI's activity records add per call.")
PY
