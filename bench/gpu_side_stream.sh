#!/usr/bin/env bash
# Short re-run on a GPU host of the adversarial cases whose verdict changed after the full table
# (side_stream made strict) plus the honest ones, with the smallest build that runs them.
set -uo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$repo/build/gpu-host"
prefix="$repo/.deps/prefix"
export PATH="/usr/local/cuda/bin:$PATH"
export LD_LIBRARY_PATH="/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ), gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
mkdir -p "$prefix/lib"
for lib in curl sqlite3 crypto; do
    ls /usr/lib/x86_64-linux-gnu/lib$lib.so >/dev/null 2>&1 ||
        ln -sf "$(ls /usr/lib/x86_64-linux-gnu/lib$lib.so.* | head -n1)" "$prefix/lib/lib$lib.so"
done
KWB_GTEST_SOURCE="$repo/.deps/googletest" cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKWB_BUILD_GUI=OFF -DKWB_WITH_TORCH=OFF \
    -DKWB_PYTHON_EXECUTABLE="$(command -v python3)" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_INCLUDE_PATH="$prefix/include" -DCMAKE_LIBRARY_PATH="$prefix/lib" >/dev/null
cmake --build "$build" --target kwb_adversarial_gpu_tests 2>&1 | grep -E "error|FAILED" | head -20
cd "$build" && ctest -L gpu -R "AdversarialGpu.*(side_stream|honest)" -j 4 -V 2>&1 |
    grep -E "\[adversarial\]|^[0-9]+:   \[|Passed|Failed|tests passed"
