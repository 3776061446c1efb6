#!/usr/bin/env bash
# The evaluation service's evidence on a GPU host (issues 15 and 16), in parts that each fit one
# device call of 10 minutes; run them back to back on one warm machine (the pairs' extensions and
# the build stay between calls while it is held):
#   bench/gpu_evaluation_service.sh prebuild    build kwb and the 31 KernelBench pairs' load_inline
#                                               extensions (289 s on an H200 host's 16 cores)
#   bench/gpu_evaluation_service.sh integrity   every bundled solution evaluated (honest: must keep
#                                               its reward); the GPU adversarial cases that hide work
#                                               from the timer or the census
#   bench/gpu_evaluation_service.sh agreement   the pairs against KernelBench's method, then
#                                               evaluations per GPU-minute
#                                               (bench/kernelbench_agreement.py; a cut run continues
#                                               where it stopped: call it again until it summarizes;
#                                               KWB_PHASES=census compares the kernelbench profile
#                                               with the sealed kernel records off, headstart with
#                                               a GPU spin before each timed call;
#                                               KWB_MEASURE_PROFILES=kernelbench leaves rl out of
#                                               the measure phase, and KWB_PHASES=warm with
#                                               KWB_WARM_CONCURRENCY=8 caches rl's baselines
#                                               8 at a time before its throughput phase)
#   bench/gpu_evaluation_service.sh latency     the edit latency through `kwb serve`
#                                               (bench/serve_latency.sh: the plain pair's fast
#                                               path, the fast-path workspace, the CUDA-Agent
#                                               layout), then the 20-repeat
#                                               stability of one pair per profile
#   bench/gpu_evaluation_service.sh threshold   one bundled solution 20 times in the rl and
#                                               cuda-agent profiles with the milestone threshold at
#                                               its own speed-up (bench/threshold_stability.py;
#                                               KWB_THRESHOLD_PROFILES=cuda-agent for one profile)
#   bench/gpu_evaluation_service.sh quick       prebuild and agreement (measure, throughput) on a
#                                               few pairs in one call, for a fresh machine
# Several parts run in one call in the order given (bench/gpu_evaluation_service.sh prebuild
# agreement); each part's time limit is cut to what is left of KWB_CALL_SECONDS (default 580, a
# device call's 600 s less the copy back), so the last part stops in time to return its log.
# KWB_ONLY=name,name limits the pairs of every part.
# Each part builds kwb when the machine is fresh. Everything is written to $OUT as it happens
# ($OUT/<part>.log), so a call cut by its time limit still brings back what it measured.
set -uo pipefail
parts=("${@:-integrity}")
out="${OUT:-/tmp/kwb-service}"
mkdir -p "$out"
call_ends=$(($(date +%s) + ${KWB_CALL_SECONDS:-580}))
exec > >(tee -a "$out/$(IFS=-; echo "${parts[*]}").log") 2>&1
source "$(dirname "${BASH_SOURCE[0]}")/gpu_host_env.sh"
# The pairs' folder must keep its path between parts: kwb's pair mode keys a candidate's
# extension build by the candidate file's path. Outside the source tree: kwb binds no folder
# inside its own trees into a shared warm server, so pairs there each started a server of their
# own (31 starts in 31 evaluations on 2026-12-06).
work="${KWB_AGREEMENT_WORK:-/tmp/kwb-kb-agreement}"
mkdir -p "$work"
echo "python: $(python3 -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__)')"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores"
export KWB_RESOURCES="$repo/resources"
kwb="$build/app/cli/kwb"

# build_kwb [TARGET...]: kwb and its CUPTI injection library, and the targets named.
build_kwb() {
    local started=$(date +%s)
    configure_gpu_host_build
    cmake --build "$build" --target kwb kwb_cupti_inject "$@" 2>&1 | grep -E "error|FAILED" | head -20
    echo "build: $(($(date +%s) - started)) s"
}

# The bundled bubblewrap (tools/pack-host-deps.sh), as bench/gpu_integrity.sh uses it.
if ! command -v bwrap >/dev/null && [ -x "$repo/.deps/sandbox/bwrap" ] &&
    "$repo/.deps/sandbox/bwrap" --ro-bind / / --unshare-pid --unshare-net --dev /dev --proc /proc true 2>/dev/null; then
    export KWB_BWRAP="$repo/.deps/sandbox/bwrap"
fi
echo "sandbox: ${KWB_BWRAP:-$(command -v bwrap || echo none)}"

# within SECONDS: the smaller of SECONDS and what is left of the call (at least 1, so that
# `timeout` stops a part that has no time left at once).
within() {
    local left=$((call_ends - $(date +%s)))
    echo $(($1 < left ? $1 : (left > 1 ? left : 1)))
}

for part in "${parts[@]}"; do
echo "== $part ($((call_ends - $(date +%s))) s left)"
only=(--only "${KWB_ONLY:-}")
case "$part" in
quick)
    only=(--only "${KWB_ONLY:-add,gelu,softmax_rows,layer_norm_rows,bug_gelu_half_intermediate,bug_relu_dropped_tail}")
    KWB_CACHE_DIR="$work/cache" timeout $(within 200) python3 "$repo/bench/kernelbench_agreement.py" --kwb "$kwb" \
        --out "$work" --jobs 8 --phases prebuild "${only[@]}" &
    prebuild=$!
    build_kwb
    wait "$prebuild"
    KWB_CACHE_DIR="$work/cache" timeout $(within 330) python3 "$repo/bench/kernelbench_agreement.py" --kwb "$kwb" \
        --out "$work" --phases measure,throughput "${only[@]}"
    cp "$work/agreement.jsonl" "$out/" 2>/dev/null ;;
prebuild)
    # The kwb build and the pairs' extension builds share the CPUs; nothing is timed meanwhile.
    KWB_CACHE_DIR="$work/cache" timeout $(within 540) python3 "$repo/bench/kernelbench_agreement.py" --kwb "$kwb" \
        --out "$work" --jobs 7 --phases prebuild "${only[@]}" &
    prebuild=$!
    build_kwb
    wait "$prebuild"
    cp "$work/agreement.jsonl" "$out/" 2>/dev/null ;;
integrity)
    build_kwb kwb_adversarial_gpu_tests
    timeout $(within 360) python3 "$repo/bench/eval_bundled.py" --kwb "$kwb" --precompile 8 --edit-tasks 0 \
        --iterations 40 --out "$out/bundled.json"
    cd "$build" && timeout $(within 170) ctest -L gpu -R "AdversarialGpu.*(side_stream|honest|report_scrub|records_|census_evasion|thread_hidden)" \
        -j 4 --output-on-failure 2>&1 | grep -E "Passed|Failed|tests passed|failure_message|message:" ;;
agreement)
    [ -x "$kwb" ] || build_kwb
    # No warm phase: a pair's first evaluation in a profile (which times and caches eager and
    # torch.compile) is in the measure phase's walls; the throughput phase runs on cached ones.
    KWB_CACHE_DIR="$work/cache" timeout $(within 560) python3 "$repo/bench/kernelbench_agreement.py" --kwb "$kwb" \
        --out "$work" --phases "${KWB_PHASES:-prebuild,measure,throughput}" --concurrency "${KWB_CONCURRENCY:-4}" --profiles "${KWB_PROFILES:-kernelbench,rl}" \
        --measure-profiles "${KWB_MEASURE_PROFILES:-kernelbench,rl}" --warm-concurrency "${KWB_WARM_CONCURRENCY:-1}" "${only[@]}"
    cp "$work/agreement.jsonl" "$out/" 2>/dev/null ;;
latency)
    [ -x "$kwb" ] || build_kwb
    timeout $(within 60) "$repo/bench/serve_latency.sh" "$kwb" cuda 5 pair
    timeout $(within 80) "$repo/bench/serve_latency.sh" "$kwb" cuda 8 fastpath
    timeout $(within 200) "$repo/bench/serve_latency.sh" "$kwb" cuda "${KWB_EDITS:-6}" workspace
    KWB_CACHE_DIR="$work/cache" timeout $(within 340) python3 "$repo/bench/kernelbench_agreement.py" --kwb "$kwb" \
        --out "$work" --phases stability --repeats "${KWB_REPEATS:-20}"
    cp "$work/agreement.jsonl" "$out/" 2>/dev/null ;;
threshold)
    [ -x "$kwb" ] || build_kwb
    timeout $(within 560) python3 "$repo/bench/threshold_stability.py" --kwb "$kwb" \
        --repeats "${KWB_REPEATS:-20}" --profiles "${KWB_THRESHOLD_PROFILES:-rl,cuda-agent}" --out "$out/threshold.jsonl" ;;
*)
    echo "unknown part: $part" >&2
    exit 2 ;;
esac
done
