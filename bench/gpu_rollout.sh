#!/usr/bin/env bash
# The rollout benchmark (issue 17) on a GPU host:
#   bench/gpu_rollout.sh [DEVICE] [PART...]   PART: anchor, rollout, resume (default: anchor rollout)
# 1. bench/rollout_tasks.py writes a KernelBench-style task set (the eight bundled tasks and 24
#    KernelBench-style single-operator tasks) with a candidate for each, and the scripted model's
#    turns (write the candidate, Profile, stop).
# 2. anchor: KWB_ANCHOR_ONLY's candidates (default: six of them) through the workspace's own
#    scripts, one process per tool call as CUDA Agent's agent runs them
#    (bench/cuda_agent_scripts.py): compiles 8 at a time first, then verification + profiling one
#    at a time on the GPU. Its own extension and torch.compile caches, so neither side warms the
#    other.
# 3. rollout: `kwb rollout` over the whole set against tests/agent/scripted_llm_server.py,
#    KWB_EPISODES episodes per task (default 2), KWB_CONCURRENCY at once (default 8), a fresh kwb
#    cache (every extension built, every baseline timed), stopped after KWB_ROLLOUT_SECONDS
#    (default 480; Ctrl+C's way, so what finished is kept); `resume` continues it in the next
#    call. Then bench/rollout_report.py over all calls so far: metrics, evaluations per GPU-minute
#    on both sides, GPU utilization (nvidia-smi every 0.5 s), where each evaluation's time went.
# On a fresh machine run `anchor`, `rollout` and, if needed, `resume` in calls back to back (the
# work folder, KWB_WORK, default /tmp/kwb-rollout-bench, and the scripted server stay while the
# machine is held).
# Environment: KWB_ONLY (task names for rollout_tasks.py), KWB_ANCHOR_ONLY (file stems), KWB_SMALL=1
# (small inputs, for a CPU run). Everything lands in $OUT (default /tmp/kwb-rollout) as it happens.
set -uo pipefail
device="${1:-cuda}"
parts=("${@:2}")
[ ${#parts[@]} -eq 0 ] && parts=(anchor rollout)
out="${OUT:-/tmp/kwb-rollout}"
mkdir -p "$out"
exec > >(tee -a "$out/rollout.log") 2>&1
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ "$device" = cuda ]; then
    source "$repo/bench/gpu_host_env.sh"
    use_bundled_bubblewrap
    started=$(date +%s)
    configure_gpu_host_build
    cmake --build "$build" --target kwb kwb_cupti_inject 2>&1 | grep -E "error|FAILED" | head -20
    echo "build: $(($(date +%s) - started)) s"
    python="$(command -v python3)"
else
    build="${KWB_BUILD:-$repo/build/release}"
    python="${KWB_PYTHON:-$HOME/.local/share/kernel-workbench/venv/bin/python}"
fi
export KWB_RESOURCES="$repo/resources"
kwb="$build/app/cli/kwb"
echo "python: $("$python" -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__)')"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores"
echo "sandbox: ${KWB_BWRAP:-$(command -v bwrap || echo none)}"

work="${KWB_WORK:-/tmp/kwb-rollout-bench}"
sampler=""
trap 'kill $sampler 2>/dev/null' EXIT
small=()
[ "${KWB_SMALL:-0}" = 1 ] && small=(--small)
# The task set is written once per setting and kept for the next part.
settings="small=${KWB_SMALL:-0} only=${KWB_ONLY:-}"
if [ "$(cat "$work/settings" 2>/dev/null)" != "$settings" ]; then
    rm -rf "$work" && mkdir -p "$work"
    "$python" "$repo/bench/rollout_tasks.py" "$work" "${small[@]}" --only "${KWB_ONLY:-}" || exit 1
    echo "$settings" >"$work/settings"
fi

# sample_gpu FILE: GPU utilization every 0.5 s into FILE until killed (nothing without a GPU).
sample_gpu() {
    command -v nvidia-smi >/dev/null || return 0
    nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv,noheader,nounits -lms 500 >"$1" &
    sampler=$!
}

anchor_only="${KWB_ANCHOR_ONLY:-101_01_gelu,103_03_softmax,105_05_gemm_bias_relu,1_relu,15_add,22_softmax_rows}"
for part in "${parts[@]}"; do
case "$part" in
anchor)
    echo "== anchor: the workspace's scripts, one process per tool call"
    rm -rf "$work/anchor-cache" "$work/inductor-anchor"
    sample_gpu "$out/anchor-gpu.csv"
    KWB_CACHE_DIR="$work/anchor-cache" TORCHINDUCTOR_CACHE_DIR="$work/inductor-anchor" "$python" "$repo/bench/cuda_agent_scripts.py" --kwb "$kwb" \
        --tasks "$work/KernelBench" --solutions "$work/solutions" --work "$work/anchor" --only "$anchor_only" \
        --jobs 8 --device "$device" --python "$python" --out "$work/anchor.json"
    kill "$sampler" 2>/dev/null; sampler=""
    cp "$work/anchor.json" "$out/" 2>/dev/null || true
    cp "$out/anchor-gpu.csv" "$work/" 2>/dev/null || true ;;
rollout | resume)
    # The scripted server outlives this device call (its own session), so that a resumed run
    # finds it at the address the run recorded.
    if ! { [ -f "$work/server.out" ] && kill -0 "$(cat "$work/server.pid" 2>/dev/null)" 2>/dev/null; }; then
        setsid "$python" "$repo/tests/agent/scripted_llm_server.py" "$work/script.json" "$work/requests.log" \
            >"$work/server.out" 2>&1 < /dev/null &
        echo $! >"$work/server.pid"
        for _ in $(seq 50); do grep -q '^PORT ' "$work/server.out" 2>/dev/null && break; sleep 0.1; done
    fi
    port="$(sed -n 's/^PORT //p' "$work/server.out")"
    [ -n "$port" ] || { echo "scripted server did not start"; exit 1; }
    if [ "$part" = rollout ]; then
        echo "== kwb rollout: ${KWB_EPISODES:-2} episodes per task, ${KWB_CONCURRENCY:-8} at once"
        rm -rf "$work/store.db"* "$work/kwb-cache" "$work/state" "$work/runs" "$work/walls" "$work/rollout-gpu.csv"
        command=(rollout --tasks "$work/KernelBench" --episodes-per-task "${KWB_EPISODES:-2}"
                 --concurrency "${KWB_CONCURRENCY:-8}" --provider openai --base-url "http://127.0.0.1:$port/v1"
                 --model scripted --max-turns 10 --device "$device" --python "$python")
    else
        echo "== kwb rollout resume"
        command=(rollout resume 1)
    fi
    sample_gpu "$out/rollout-gpu.csv"
    started=$(date +%s.%N)
    # Stopped (SIGINT: what finished is kept) before the device call's end; `resume` continues.
    OPENAI_API_KEY=sk-rollout-bench KWB_CACHE_DIR="$work/kwb-cache" KWB_STATE_DIR="$work/state" \
        timeout -s INT -k 60 "${KWB_ROLLOUT_SECONDS:-480}" "$kwb" "${command[@]}" --store "$work/store.db" --json \
        >"$out/rollout.json"
    echo "rollout exit $?: $(cat "$out/rollout.json")"
    python3 -c "print($(date +%s.%N) - $started)" >>"$work/walls"
    kill "$sampler" 2>/dev/null; sampler=""
    cat "$out/rollout-gpu.csv" >>"$work/rollout-gpu.csv" 2>/dev/null
    "$kwb" runs --store "$work/store.db" metrics 1 --json >"$out/metrics.json"
    "$python" "$repo/bench/rollout_report.py" --store "$work/store.db" --metrics "$out/metrics.json" \
        --wall "$(paste -sd+ "$work/walls" | python3 -c 'import sys; print(eval(sys.stdin.read()))')" \
        --gpu-samples "$work/rollout-gpu.csv" \
        --anchor "$work/anchor.json" --anchor-gpu-samples "$work/anchor-gpu.csv" | tee "$out/report.md"
    cp "$work/store.db" "$out/store.db" 2>/dev/null
    gzip -c "$work/requests.log" >"$out/requests.log.gz" 2>/dev/null ;;
*)
    echo "unknown part: $part" >&2
    exit 2 ;;
esac
done
