#!/usr/bin/env bash
# Foundation proof on a GPU host: builds the Qt-free targets there (tools/gpu-host-build.sh),
# runs `kwb doctor` (NVRTC kernel launched through the dlopen'ed driver) and `ctest -L gpu`.
# Prints a header with date, GPU, driver and versions for bench/results/.
set -uo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader)"
echo "nvcc: $(nvcc --version | tail -n2 | head -n1)"
echo "g++: $(g++ --version | head -n1)"
echo "cmake: $(cmake --version | head -n1)"
echo "python: $(python3 -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__)')"
KWB_DEPS_PREFIX="${KWB_DEPS_PREFIX:-$repo/.deps/prefix}" KWB_GTEST_SOURCE="${KWB_GTEST_SOURCE:-$repo/.deps/googletest}" \
    "$repo/tools/gpu-host-build.sh" "$repo/build/gpu-host" 2>&1 | grep -vE '^\[[0-9]+/[0-9]+\] (Building|Linking)|^-- |CMake Warning|Call Stack|^  '
echo "gpu tests (verbose):"
"$repo/build/gpu-host/tests/kwb_gpu_tests" 2>&1 | grep -E '^\[|gpu\]'
