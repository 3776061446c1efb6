#!/usr/bin/env bash
# Reward-integrity evidence on a GPU host, in two parts (each fits one device call):
#   bench/gpu_integrity.sh adversarial   build, then the whole adversarial table in CUDA mode
#   bench/gpu_integrity.sh bundled       the bundled solutions (honest: must not be flagged) with
#                                        repeat-until-stable timing, then the GPU bad-input tests
# Prints a header with date, GPU, driver and versions for bench/results/.
set -uo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$repo/build/gpu-host"
part="${1:-adversarial}"
export PATH="/usr/local/cuda/bin:$PATH"
export LD_LIBRARY_PATH="/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader)"
echo "python: $(python3 -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__)')"
if [ ! -x "$build/tests/kwb_adversarial_gpu_tests" ] || [ "$part" = adversarial ]; then
    KWB_BUILD_ONLY=1 KWB_DEPS_PREFIX="${KWB_DEPS_PREFIX:-$repo/.deps/prefix}" \
        KWB_GTEST_SOURCE="${KWB_GTEST_SOURCE:-$repo/.deps/googletest}" \
        "$repo/tools/gpu-host-build.sh" "$build" 2>&1 | grep -E "error|FAILED|Error" | head -40
fi
cd "$build" || exit 1
case "$part" in
adversarial)
    # Four at a time: eight share the GPU enough to stretch kernel times past the census slack, and each case is mostly Python start-up and compiles.
    ctest -L gpu -R AdversarialGpu -j 4 -V 2>&1 | grep -E "\[adversarial\]|^[0-9]+:   \[|Passed|Failed|tests passed|Test #" ;;
bundled)
    ctest -L gpu -R "AdversarialGpu.*side_stream" -V 2>&1 | grep -E "\[adversarial\]|^[0-9]+:   \[|Passed|Failed"
    python3 "$repo/bench/eval_bundled.py" --kwb "$build/app/cli/kwb" --precompile 8 --edit-tasks 0 \
        --iterations 40 --out "${OUT:-/tmp}/eval-bundled-integrity.json"
    ctest -L gpu -R "GpuEvaluation|GpuLaunch" --output-on-failure 2>&1 | tail -15 ;;
esac
