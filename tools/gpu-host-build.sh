#!/usr/bin/env bash
# Builds the Qt-free targets (engine, agent, kwb, GPU tests) on a GPU host and runs `ctest -L gpu`.
# Such hosts (e.g. our H200 machine: Ubuntu 24.04, g++ 13, nvcc 13.0, torch 2.11+cu130) have no
# Qt. libtorch comes from the host's Python torch through torch.utils.cmake_prefix_path.
#
#   tools/gpu-host-build.sh [BUILD_DIR]
#
# Environment: KWB_PYTHON        the Python whose torch to use (default: python3)
#              KWB_BUILD_ONLY    1: build, then stop before kwb doctor and ctest
#              KWB_GTEST_SOURCE  a GoogleTest source tree, when the host has no packaged GTest
#                                (Debian's /usr/src/googletest works; copy it over)
#              KWB_DEPS_PREFIX   a prefix with headers the host lacks (CLI11, nlohmann-json,
#                                curl, SQLite), made by tools/pack-host-deps.sh on a dev machine
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$repo/build/gpu-host}"
python="${KWB_PYTHON:-$(command -v python3)}"
export PATH="/usr/local/cuda/bin:$PATH"
export LD_LIBRARY_PATH="/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

extra=()
if [ -n "${KWB_DEPS_PREFIX:-}" ]; then
    prefix="$(cd "$KWB_DEPS_PREFIX" && pwd)"
    # Hosts without -dev packages still ship the runtime libraries; link names CMake can find.
    mkdir -p "$prefix/lib"
    for lib in curl sqlite3 crypto; do
        if ! ls /usr/lib/x86_64-linux-gnu/lib$lib.so >/dev/null 2>&1; then
            runtime="$(ls /usr/lib/x86_64-linux-gnu/lib$lib.so.* 2>/dev/null | head -n1 || true)"
            [ -n "$runtime" ] && ln -sf "$runtime" "$prefix/lib/lib$lib.so"
        fi
    done
    extra+=("-DCMAKE_PREFIX_PATH=$prefix" "-DCMAKE_INCLUDE_PATH=$prefix/include" "-DCMAKE_LIBRARY_PATH=$prefix/lib")
fi

echo "== host: $(uname -n), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo 'no nvidia-smi')"
echo "== python: $python ($("$python" -c 'import torch; print("torch", torch.__version__)'))"
cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKWB_BUILD_GUI=OFF \
    -DKWB_PYTHON_EXECUTABLE="$python" "${extra[@]}"
cmake --build "$build" --target kwb kwb_gpu_tests kwb_engine_tests kwb_adversarial_gpu_tests
# KWB_BUILD_ONLY=1: stop here (bench scripts run their own selection of tests).
[ "${KWB_BUILD_ONLY:-0}" = 1 ] && exit 0
"$build/app/cli/kwb" --version
"$build/app/cli/kwb" doctor --python "$python"
cd "$build"
ctest -L gpu --output-on-failure
