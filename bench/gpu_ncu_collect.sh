#!/usr/bin/env bash
# Hardware counters on demand on a GPU host (issue 19, item 5), in one device call on a fresh
# machine: kwb built headless (with the carried .deps), then
#   1. the GPU test NcuCounters (an evaluation with counters, its CSV pages parsed back);
#   2. which launches ncu's NVTX filter "candidate/" selects (bench/ncu/nvtx_filter_probe.py):
#      it does select nested ranges, but the candidate runs in a process of its own, where the
#      judge's ranges are not on the stack, so counters select the workspace's own kernels by name;
#   3. `kwb eval WS --counters` on GELU workspaces of both layouts (the fast path's NVRTC kernel,
#      the CUDA-Agent layout's torch extension), one with a kernel filter and chosen sections,
#      one with every kernel profiled;
#   4. `kwb counters` reading each run's pages back, with the roofline.
# The bundled bubblewrap is used where the host has none, so ncu runs inside the sandbox.
# Everything goes to $OUT/ncu-collect.log as it happens.
set -uo pipefail
out="${OUT:-/tmp/kwb-ncu-collect}"
mkdir -p "$out"
exec > >(tee -a "$out/ncu-collect.log") 2>&1
source "$(dirname "${BASH_SOURCE[0]}")/gpu_host_env.sh"
use_bundled_bubblewrap
echo "sandbox: ${KWB_BWRAP:-$(command -v bwrap || echo none)}"
echo "ncu: $(ncu --version 2>&1 | tail -1)"
echo "python: $(python3 -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__)')"
export KWB_RESOURCES="$repo/resources"
started=$(date +%s)
configure_gpu_host_build
cmake --build "$build" --target kwb kwb_cupti_inject kwb_gpu_tests 2>&1 | grep -E "error|FAILED" | head -20
echo "build: $(($(date +%s) - started)) s"
kwb="$build/app/cli/kwb"

echo "== 1. GPU test"
"$build/tests/kwb_gpu_tests" --gtest_filter='NcuCounters.*' 2>&1 | tail -12

work="$(mktemp -d)"
run() { # run NAME WORKSPACE-FLAGS -- EVAL-FLAGS
    local name="$1" ws="$work/$1"
    shift
    local init=()
    while [ "$1" != "--" ]; do init+=("$1"); shift; done
    shift
    "$kwb" workspace init "$repo/resources/tasks/01_gelu.py" "$ws" --with-solution "${init[@]}" >/dev/null
    local t0=$(date +%s)
    "$kwb" eval "$ws" --serve off --counters --counters-out "$out/$name" "$@" > "$out/$name-eval.txt" 2>&1
    echo "eval $name: exit $?, $(($(date +%s) - t0)) s"
    grep -E "^(verify|profile|flag|counters|speed-up|total)|^  (verify|profile)" "$out/$name-eval.txt"
    if [ -f "$out/$name/details.csv" ]; then
        "$kwb" counters "$out/$name/details.csv" --raw "$out/$name/raw.csv" > "$out/$name-counters.txt" 2>&1
        echo "kwb counters: exit $?"
        head -40 "$out/$name-counters.txt"
    fi
}
echo "== 2. which launches ncu's NVTX filter selects (the harness nests ranges in \"candidate\")"
(cd "$repo/bench/ncu" && ncu --nvtx --nvtx-include 'candidate/' --section LaunchStats --csv \
    --page details python3 nvtx_filter_probe.py 2>&1 | grep '"Grid Size"' | cut -d, -f5,15,16)
echo "== 3./4. kwb eval --counters, then kwb counters"
run fast --fast -- --device cuda
run fast-all-kernels --fast -- --device cuda --counters-all-kernels --counters-launches 2
run agent -- --device cuda --counters-sections SpeedOfLight,SpeedOfLight_RooflineChart,Occupancy,LaunchStats \
    --counters-kernel 'gelu' --counters-launches 2
ls -la "$out"/fast "$out"/agent 2>/dev/null
echo "total: $(($(date +%s) - started)) s"
