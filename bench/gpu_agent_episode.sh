#!/usr/bin/env bash
# The scripted agent episode of tests/cli/agent_episode.sh on a GPU host, in CUDA mode: the
# agent writes task 07's CUDA kernels, verifies and stops; the episode must earn reward >= 1.
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
KWB_GTEST_SOURCE="$repo/.deps/googletest" cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DKWB_BUILD_GUI=OFF -DKWB_BUILD_TESTS=OFF -DKWB_WITH_TORCH=OFF -DKWB_PYTHON_EXECUTABLE="$(command -v python3)" \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_INCLUDE_PATH="$prefix/include" -DCMAKE_LIBRARY_PATH="$prefix/lib" >/dev/null
cmake --build "$build" --target kwb 2>&1 | grep -E "error|FAILED" | head -20
KWB_AGENT_DEVICE=cuda bash "$repo/tests/cli/agent_episode.sh" "$build/app/cli/kwb" "$(command -v python3)" "$repo"
