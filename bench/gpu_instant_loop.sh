#!/usr/bin/env bash
# Issue 5 (the instant loop) evidence on a GPU host, in parts that each fit one device call:
#   bench/gpu_instant_loop.sh loop         build; compile-diagnostics latency; SASS through
#                                          cuobjdump; the edit -> verified + profiled benchmark
#                                          for the fast and agent paths (standby children, 1.5 s
#                                          pause), the fast path with no pause, and the cold
#                                          path in what is left of the call
#   bench/gpu_instant_loop.sh loop-adversarial  the edit loop (EDITS, default 12) and the
#                                          adversarial table through the warm worker and standby
#                                          children, every case twice
#   bench/gpu_instant_loop.sh cold         the cold path alone (COLD_EDITS, default 8)
#   bench/gpu_instant_loop.sh final        the cold path cut at 240 s, CUPTI overhead, the fast loop
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
# Workspaces and caches stay out of $out: only logs and tables come back from a device call.
work="${KWB_BENCH_WORK:-/tmp/kwb-instant-work}"
mkdir -p "$out" "$work"
echo "python: $(python3 -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__)')"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores"
configure_gpu_host_build
use_bundled_bubblewrap
echo "sandbox: ${KWB_BWRAP:-$(command -v bwrap || echo none)}"
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

# edit_loop NAME PATHS EDITS PAUSE_MS [extra benchmark options]: one run of the edit-loop benchmark,
# its table to stdout and $out/NAME.md, every edit's breakdown to $out/NAME.log. LOOP_TIMEOUT
# (seconds) cuts it short, keeping the edits measured so far in the log.
edit_loop() {
    local name="$1" paths="$2" edits="$3" pause="$4"
    shift 4
    echo "## edit -> verified + profiled: $paths, $edits edits, ${pause} ms pause before each save"
    timeout "${LOOP_TIMEOUT:-590}" "$build/bench/edit_loop/kwb_edit_loop_bench" \
        --paths "$paths" --edits "$edits" --cold-edits "$edits" \
        --pause-ms "$pause" --root "$work/$name" --json "$out/$name.json" "$@" 2>"$out/$name.log" |
        tee "$out/$name.md"
    grep -E "warm-up|edit [0-9]+:" -A8 "$out/$name.log" | head -n 40
}

adversarial_table() {
    echo "## adversarial table, warm worker + standby (each case twice)"
    (cd "$build" && KWB_WARM_WORKER=1 ctest -L gpu -R AdversarialGpu -j 4 -V 2>&1 |
        tee "$out/adversarial.log" |
        grep -E "\[adversarial\]|^[0-9]+:   \[|Passed|Failed|tests passed|Test #" | tail -n 120)
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
    edit_loop edit-loop fast,agent "${EDITS:-20}" 1500
    edit_loop edit-loop-nopause fast 8 0
    # The cold path on the same GPU in the same run, for as long as the call has left (CALL_S,
    # default 590 s); `cold` measures more of its edits in a call of its own.
    left=$((${CALL_S:-590} - ($(date +%s) - started) - 15))
    if [ "$left" -gt 150 ]; then
        LOOP_TIMEOUT=$left edit_loop edit-loop-cold cold "${COLD_EDITS:-8}" 0
    else
        echo "## cold path skipped: $left s left in this call"
    fi
    ;;
loop-adversarial)
    # After a harness change: the edit loop again (no diagnostics) and the adversarial table.
    edit_loop edit-loop fast,agent "${EDITS:-12}" 1500
    edit_loop edit-loop-nopause fast 8 0
    adversarial_table
    ;;
cold)
    # The cold path (c) alone: over 60 s per edit, so about 7 edits fit one device call.
    LOOP_TIMEOUT=560 edit_loop edit-loop-cold cold "${COLD_EDITS:-8}" 0
    ;;
final)
    # The run of 2026-11-30 14:14 UTC: the cold path (cut at 240 s), the CUPTI overhead, and the
    # fast loop with each stage's process time next to its phases.
    LOOP_TIMEOUT=240 edit_loop edit-loop-cold cold 3 0
    echo "## CUPTI overhead (07_scale_residual_add, 2 alternating repeats)"
    KWB_BENCH_OUT="$out/cupti" timeout 200 bash "$repo/bench/cupti_overhead.sh" 2 07_scale_residual_add 2>&1 |
        tee "$out/cupti-overhead.md" | tail -n 8
    edit_loop edit-loop-fast fast 10 1500
    ;;
timeline)
    (cd "$build" && ctest -L gpu -R Cupti --output-on-failure 2>&1 | tail -n 25)
    "$kwb" workspace init "$tasks/07_scale_residual_add.py" "$out/tl" --with-solution --force >/dev/null
    "$kwb" timeline "$out/tl" --out "$out/trace.json" --records "$out/records.jsonl" 2>&1 | tail -n 25
    python3 -c "import json,sys; t=json.load(open('$out/trace.json')); print('trace events:', len(t['traceEvents']))"
    KWB_BENCH_OUT="$out/cupti" bash "$repo/bench/cupti_overhead.sh" 2 07_scale_residual_add 2>&1 | tail -n 12
    ;;
quick)
    edit_loop edit-loop-quick fast "${EDITS:-8}" 1500
    ;;
adversarial)
    adversarial_table
    ;;
esac
echo "total: $(($(date +%s) - started)) s"
