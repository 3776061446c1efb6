#!/usr/bin/env bash
# Issue 5 (the instant loop) evidence on a GPU host, in parts that each fit one device call:
#   bench/gpu_instant_loop.sh loop         build; fast-path evaluations end to end; the edit ->
#                                          verified + profiled benchmark (fast, agent, cold);
#                                          compile-diagnostics latency; SASS through cuobjdump
#   bench/gpu_instant_loop.sh timeline     the CUPTI GPU tests, `kwb timeline` on a bundled task,
#                                          and the CUPTI overhead benchmark
#   bench/gpu_instant_loop.sh adversarial  the whole adversarial table through the warm worker
#   bench/gpu_instant_loop.sh quick        the fast loop with phase times, and the warm worker's
#                                          three stale_output cases
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
    fast_path_evaluations
    echo "## edit -> verified + profiled (20 edits fast/agent, 5 cold)"
    "$build/bench/edit_loop/kwb_edit_loop_bench" --edits 20 --cold-edits 5 --root "$out/loop" \
        --json "$out/edit-loop.json" 2>"$out/edit-loop.log"
    tail -n 8 "$out/edit-loop.log"
    echo "## diagnostics latency"
    bash "$repo/bench/diagnostics_latency.sh" "$kwb" 20 5 2>&1 | tail -n 40
    echo "## SASS and resources through the host's cuobjdump"
    "$kwb" nvrtc "$repo/resources/solutions_fast/01_gelu/kernels/gelu.cu" --sass 2>&1 | head -n 30
    ;;
timeline)
    (cd "$build" && ctest -L gpu -R Cupti --output-on-failure 2>&1 | tail -n 25)
    "$kwb" workspace init "$tasks/07_scale_residual_add.py" "$out/tl" --with-solution --force >/dev/null
    "$kwb" timeline "$out/tl" --out "$out/trace.json" --records "$out/records.jsonl" 2>&1 | tail -n 25
    python3 -c "import json,sys; t=json.load(open('$out/trace.json')); print('trace events:', len(t['traceEvents']))"
    bash "$repo/bench/cupti_overhead.sh" 3 07_scale_residual_add 05_gemm_bias_relu 2>&1 | tail -n 20
    ;;
quick)
    # The fast loop only, with the harness's phase times, then the three adversarial cases that
    # had missed stale_output through the warm worker.
    "$build/bench/edit_loop/kwb_edit_loop_bench" --paths fast --edits "${EDITS:-8}" --root "$out/loop" \
        --json "$out/edit-loop-quick.json" 2>&1 | tee "$out/edit-loop-quick.log" | tail -n 40
    (cd "$build" && KWB_WARM_WORKER=1 ctest -L gpu -R "AdversarialGpu.*(cache_by_data_ptr|cache_by_id|cuda_graph_stale_replay)" \
        -j 3 2>&1 | grep -E "Passed|Failed|tests passed")
    ;;
adversarial)
    cd "$build" || exit 1
    KWB_WARM_WORKER=1 ctest -L gpu -R AdversarialGpu -j 4 -V 2>&1 |
        grep -E "\[adversarial\]|^[0-9]+:   \[|Passed|Failed|tests passed|Test #" | tail -n 80
    ;;
esac
echo "total: $(($(date +%s) - started)) s"
