#!/usr/bin/env bash
# Issue 5 (the instant loop) evidence on a GPU host, in parts that each fit one device call:
#   bench/gpu_instant_loop.sh loop         build; compile-diagnostics latency; SASS through
#                                          cuobjdump; the edit -> verified + profiled benchmark
#                                          for the fast and agent paths (standby children, 1.5 s
#                                          pause) and the fast path with no pause
#   bench/gpu_instant_loop.sh rest         the cold path of the benchmark, and the adversarial
#                                          table through the warm worker and standby children
#   bench/gpu_instant_loop.sh timeline     the CUPTI GPU tests, `kwb timeline` on a bundled task,
#                                          and the CUPTI overhead benchmark
#   bench/gpu_instant_loop.sh fast         fast-path evaluations end to end (kwb eval --fast)
#   bench/gpu_instant_loop.sh adversarial  the adversarial table alone
#   bench/gpu_instant_loop.sh quick        the fast loop alone (EDITS, default 8)
# Output goes to stdout (and raw files to $OUT) for bench/results/.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/gpu_host_env.sh"
part="${1:-loop}"
out="${OUT:-/tmp/kwb-instant}"
mkdir -p "$out"
echo "python: $(python3 -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__)')"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores"
configure_gpu_host_build
started=$(date +%s)
cmake --build "$build" --target kwb kwb_cupti_inject kwb_edit_loop_bench kwb_gpu_tests \
    kwb_adversarial_gpu_tests 2>&1 | grep -E "error|FAILED" | head -20
echo "build: $(($(date +%s) - started)) s"
kwb="$build/app/cli/kwb"
tasks="$repo/resources/tasks"

fast_path_evaluations() {
    echo "## fast path end to end"
    for task in 01_gelu 07_scale_residual_add; do
        "$kwb" workspace init "$tasks/$task.py" "$out/fast-$task" --fast --with-solution --force >/dev/null
        "$kwb" eval "$out/fast-$task" --fast --device cuda --json >"$out/fast-$task.json"
        python3 - "$out/fast-$task.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
stages = ", ".join(f"{s['name']} {s['seconds']:.2f}s" for s in r["stages"])
flags = ", ".join(f"{f['code']}({f['severity']})" for f in r["flags"]) or "none"
census = r.get("integrity", {}).get("kernel_census", {})
kernels = ", ".join(f"{k['name']} ({k['origin']})" for k in census.get("kernels", [])[:3])
print(f"- {r['workspace'].split('/')[-1]}: reward {r['reward']} ({r['reward_reason']}), correct {r['correct']}, "
      f"{r['speedup_vs_eager']:.2f}x eager, {r['speedup_vs_compile']:.2f}x compile; total {r['total_seconds']:.2f}s "
      f"[{stages}]; flags: {flags}; kernels: {kernels}; failure: {r.get('failure_kind','')} {r.get('failure_message','')[:300]}")
PY
    done
}

case "$part" in
fast)
    fast_path_evaluations
    ;;
loop)
    # Diagnostics first (short), then the edit loop with standby children: a 1.5 s pause before
    # each save, and the worst case (no pause) for the fast path.
    echo "## diagnostics latency"
    bash "$repo/bench/diagnostics_latency.sh" "$kwb" 20 5 2>&1 | tee "$out/diagnostics.md" | tail -n 40
    echo "## SASS and resources through the host's cuobjdump"
    "$kwb" nvrtc "$repo/resources/solutions_fast/01_gelu/kernels/gelu.cu" --sass 2>&1 | head -n 30
    echo "## edit -> verified + profiled, fast and agent, 20 edits, 1.5 s pause, standby children"
    "$build/bench/edit_loop/kwb_edit_loop_bench" --paths fast,agent --edits 20 --pause-ms 1500 \
        --root "$out/loop" --json "$out/edit-loop.json" 2>"$out/edit-loop.log" | tee "$out/edit-loop.md"
    grep -E "warm-up|edit 1:|edit 2:|edit 20:" -A4 "$out/edit-loop.log" | head -n 60
    echo "## fast path, no pause (the standby children get no time), 8 edits"
    "$build/bench/edit_loop/kwb_edit_loop_bench" --paths fast --edits 8 --pause-ms 0 \
        --root "$out/loop0" --json "$out/edit-loop-nopause.json" 2>"$out/edit-loop-nopause.log" |
        tee "$out/edit-loop-nopause.md"
    grep -E "edit [0-9]+:" "$out/edit-loop-nopause.log" | head -n 10
    ;;
loop-adversarial)
    # After a harness change: the edit loop again (EDITS, default 12; no diagnostics) and the
    # adversarial table through the warm worker and standby children.
    n="${EDITS:-12}"
    echo "## edit -> verified + profiled, fast and agent, $n edits, 1.5 s pause, standby children"
    "$build/bench/edit_loop/kwb_edit_loop_bench" --paths fast,agent --edits "$n" --pause-ms 1500 \
        --root "$out/loop" --json "$out/edit-loop.json" 2>"$out/edit-loop.log" | tee "$out/edit-loop.md"
    grep -E "warm-up|edit 1:|edit 2:" -A4 "$out/edit-loop.log" | head -n 40
    echo "## fast path, no pause, 8 edits"
    "$build/bench/edit_loop/kwb_edit_loop_bench" --paths fast --edits 8 --pause-ms 0 \
        --root "$out/loop0" --json "$out/edit-loop-nopause.json" 2>"$out/edit-loop-nopause.log" |
        tee "$out/edit-loop-nopause.md"
    echo "## adversarial table, warm worker + standby"
    (cd "$build" && KWB_WARM_WORKER=1 ctest -L gpu -R AdversarialGpu -j 4 -V 2>&1 |
        tee "$out/adversarial.log" |
        grep -E "\[adversarial\]|^[0-9]+:   \[|Passed|Failed|tests passed|Test #" | tail -n 120)
    ;;
final)
    # The benchmark's cold path (c), the CUPTI overhead, and the fast loop once more with each
    # stage's process time next to its phases.
    echo "## cold full rebuild, 3 edits"
    timeout 240 "$build/bench/edit_loop/kwb_edit_loop_bench" --paths cold --cold-edits 3 --pause-ms 0 \
        --root "$out/cold" --json "$out/edit-loop-cold.json" 2>"$out/edit-loop-cold.log" | tee "$out/edit-loop-cold.md"
    grep -E "warm-up|edit [0-9]+:" "$out/edit-loop-cold.log"
    echo "## CUPTI overhead (07_scale_residual_add, 2 alternating repeats)"
    KWB_BENCH_OUT="$out/cupti" timeout 200 bash "$repo/bench/cupti_overhead.sh" 2 07_scale_residual_add 2>&1 |
        tee "$out/cupti-overhead.md" | tail -n 8
    echo "## fast loop, 10 edits, 1.5 s pause, stage process times"
    "$build/bench/edit_loop/kwb_edit_loop_bench" --paths fast --edits 10 --pause-ms 1500 \
        --root "$out/loopf" --json "$out/edit-loop-fast.json" 2>"$out/edit-loop-fast.log" | tee "$out/edit-loop-fast.md"
    grep -E "edit [0-9]+:" -A7 "$out/edit-loop-fast.log" | head -n 40
    ;;
rest)
    # The cold path (c) of the edit-loop benchmark, then the adversarial table through the warm
    # worker: every case twice, the second time on standby children.
    echo "## cold full rebuild, 3 edits"
    "$build/bench/edit_loop/kwb_edit_loop_bench" --paths cold --cold-edits 3 --pause-ms 0 \
        --root "$out/cold" --json "$out/edit-loop-cold.json" 2>"$out/edit-loop-cold.log" | tee "$out/edit-loop-cold.md"
    grep -E "edit [0-9]+:" "$out/edit-loop-cold.log"
    echo "## adversarial table, warm worker + standby"
    (cd "$build" && KWB_WARM_WORKER=1 ctest -L gpu -R AdversarialGpu -j 4 -V 2>&1 |
        tee "$out/adversarial.log" |
        grep -E "\[adversarial\]|^[0-9]+:   \[|Passed|Failed|tests passed|Test #" | tail -n 120)
    ;;
timeline)
    (cd "$build" && ctest -L gpu -R Cupti --output-on-failure 2>&1 | tail -n 25)
    "$kwb" workspace init "$tasks/07_scale_residual_add.py" "$out/tl" --with-solution --force >/dev/null
    "$kwb" timeline "$out/tl" --out "$out/trace.json" --records "$out/records.jsonl" 2>&1 | tail -n 25
    python3 -c "import json,sys; t=json.load(open('$out/trace.json')); print('trace events:', len(t['traceEvents']))"
    KWB_BENCH_OUT="$out/cupti" bash "$repo/bench/cupti_overhead.sh" 2 07_scale_residual_add 2>&1 | tail -n 12
    ;;
quick)
    "$build/bench/edit_loop/kwb_edit_loop_bench" --paths fast --edits "${EDITS:-8}" --root "$out/loop" \
        --json "$out/edit-loop-quick.json" 2>&1 | tee "$out/edit-loop-quick.log" | tail -n 40
    ;;
adversarial)
    cd "$build" || exit 1
    KWB_WARM_WORKER=1 ctest -L gpu -R AdversarialGpu -j 4 -V 2>&1 |
        grep -E "\[adversarial\]|^[0-9]+:   \[|Passed|Failed|tests passed|Test #" | tail -n 80
    ;;
esac
echo "total: $(($(date +%s) - started)) s"
