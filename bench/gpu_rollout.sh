#!/usr/bin/env bash
# The rollout benchmark (issue 17) on a GPU host:
#   bench/gpu_rollout.sh [DEVICE] [PART...]        PART: anchor, rollout (default: both, in order)
# 1. bench/rollout_tasks.py writes a KernelBench-style task set (the eight bundled tasks and 24
#    KernelBench-style single-operator tasks) with a candidate for each, and the scripted model's
#    turns (write the candidate, Profile, stop).
# 2. anchor: KWB_ANCHOR_ONLY's candidates (default: six of them) through the workspace's own
#    scripts, one process per tool call as CUDA Agent's agent runs them
#    (bench/cuda_agent_scripts.py): compiles 8 at a time first, then verification + profiling one
#    at a time on the GPU. Its own extension and torch.compile caches, so neither side warms the
#    other.
# 3. rollout: `kwb rollout` over the whole set against tests/agent/scripted_llm_server.py,
#    KWB_CONCURRENCY episodes at once (default 8), a fresh kwb cache (every extension built,
#    every baseline timed); then bench/rollout_report.py: metrics, evaluations per GPU-minute on
#    both sides, GPU utilization (nvidia-smi every 0.5 s), and where each evaluation's time went.
# The parts fit one device call together only with time to spare on a warm build; on a fresh
# machine run `anchor` and `rollout` in two calls back to back (the work folder, KWB_WORK,
# default /tmp/kwb-rollout-bench, stays while the machine is held).
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
sampler="" server_pid=""
trap 'kill $sampler $server_pid 2>/dev/null' EXIT
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
    cp "$work/anchor.json" "$out/" 2>/dev/null
    cp "$out/anchor-gpu.csv" "$work/" 2>/dev/null ;;
rollout)
    echo "== kwb rollout"
    rm -rf "$work/store.db"* "$work/kwb-cache" "$work/state" "$work/runs"
    "$python" "$repo/tests/agent/scripted_llm_server.py" "$work/script.json" "$work/requests.log" >"$work/server.out" &
    server_pid=$!
    for _ in $(seq 50); do grep -q '^PORT ' "$work/server.out" 2>/dev/null && break; sleep 0.1; done
    port="$(sed -n 's/^PORT //p' "$work/server.out")"
    [ -n "$port" ] || { echo "scripted server did not start"; exit 1; }
    sample_gpu "$out/rollout-gpu.csv"
    rollout_started=$(date +%s.%N)
    OPENAI_API_KEY=sk-rollout-bench KWB_CACHE_DIR="$work/kwb-cache" KWB_STATE_DIR="$work/state" \
        "$kwb" rollout --tasks "$work/KernelBench" --episodes-per-task 1 --concurrency "${KWB_CONCURRENCY:-8}" \
        --provider openai --base-url "http://127.0.0.1:$port/v1" --model scripted --max-turns 6 \
        --device "$device" --python "$python" --store "$work/store.db" --json >"$out/rollout.json"
    echo "rollout exit $?: $(cat "$out/rollout.json")"
    rollout_ended=$(date +%s.%N)
    kill "$sampler" 2>/dev/null; sampler=""
    "$kwb" runs --store "$work/store.db" metrics 1 --json >"$out/metrics.json"
    "$python" "$repo/bench/rollout_report.py" --store "$work/store.db" --metrics "$out/metrics.json" \
        --started "$rollout_started" --ended "$rollout_ended" --gpu-samples "$out/rollout-gpu.csv" \
        --anchor "$work/anchor.json" --anchor-gpu-samples "$work/anchor-gpu.csv" | tee "$out/report.md"
    kill "$server_pid" 2>/dev/null; server_pid=""
    cp "$work/store.db" "$out/store.db" 2>/dev/null
    gzip -c "$work/requests.log" >"$out/requests.log.gz" 2>/dev/null ;;
*)
    echo "unknown part: $part" >&2
    exit 2 ;;
esac
done
