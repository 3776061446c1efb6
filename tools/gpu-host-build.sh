#!/usr/bin/env bash
# Builds the Qt-free targets the GPU tests need (kwb, the CUPTI injection library, the GPU test
# binaries) on a GPU host, then runs `kwb doctor` and every test labelled `gpu`.
# Such hosts (e.g. our H200 machine: Ubuntu 24.04, g++ 13, nvcc 13.0, torch 2.11+cu130) have no
# Qt. libtorch comes from the host's Python torch through torch.utils.cmake_prefix_path.
#
#   tools/gpu-host-build.sh [BUILD_DIR]
#
# Environment: KWB_PYTHON        the Python whose torch to use (default: python3)
#              KWB_BWRAP         the bubblewrap to sandbox evaluations with (default: the host's,
#                                else the checkout's .deps/sandbox/bwrap)
#              KWB_BUILD_ONLY    1: build, then stop before kwb doctor and ctest
#              KWB_GTEST_SOURCE  a GoogleTest source tree, when the host has no packaged GTest
#                                (Debian's /usr/src/googletest works; copy it over)
#              KWB_DEPS_PREFIX   a prefix with headers the host lacks (CLI11, nlohmann-json,
#                                curl, SQLite), made by tools/pack-host-deps.sh on a dev machine
#                                (default: the checkout's .deps/prefix when it exists)
#
# What the host lacks is found in this order: the host's own packages; with root and a reachable
# package archive, apt-get installs them; the checkout's .deps/ (tools/pack-host-deps.sh on a dev
# machine, then copy the checkout); otherwise the script names each missing piece and stops.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$repo/build/gpu-host}"
python="${KWB_PYTHON:-$(command -v python3)}"
export PATH="/usr/local/cuda/bin:$PATH"
export LD_LIBRARY_PATH="/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# The headers the build needs, each with the Debian/Ubuntu package that has it.
declare -A needed=(
    [sqlite3.h]=libsqlite3-dev [CLI/CLI.hpp]=libcli11-dev [nlohmann/json.hpp]=nlohmann-json3-dev
    [curl/curl.h]=libcurl4-openssl-dev [openssl/evp.h]=libssl-dev [pcre2.h]=libpcre2-dev
)
missing_headers() {
    local header dir found
    for header in "${!needed[@]}"; do
        found=0
        for dir in /usr/include /usr/include/x86_64-linux-gnu /usr/local/include ${KWB_DEPS_PREFIX:+"$KWB_DEPS_PREFIX/include"}; do
            [ -e "$dir/$header" ] && found=1 && break
        done
        [ "$found" = 1 ] || echo "$header"
    done
}
have_gtest() {
    [ -n "${KWB_GTEST_SOURCE:-}" ] || [ -e /usr/include/gtest/gtest.h ] || [ -d /usr/src/googletest ]
}
if [ -z "${KWB_DEPS_PREFIX:-}" ] && [ -n "$(missing_headers)" ] && [ -d "$repo/.deps/prefix" ]; then
    KWB_DEPS_PREFIX="$repo/.deps/prefix"
fi
if [ -z "${KWB_GTEST_SOURCE:-}" ] && ! have_gtest && [ -d "$repo/.deps/googletest" ]; then
    KWB_GTEST_SOURCE="$repo/.deps/googletest"
fi
if [ -n "$(missing_headers)" ] || ! have_gtest; then
    packages=$(for h in $(missing_headers); do echo "${needed[$h]}"; done)
    have_gtest || packages="$packages libgtest-dev"
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null && timeout 120 apt-get update -qq >/dev/null 2>&1; then
        echo "== installing what the host lacks: $packages"
        # shellcheck disable=SC2086
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $packages >/dev/null
    fi
fi
if [ -n "$(missing_headers)" ] || ! have_gtest; then
    echo "gpu-host-build: this host lacks what the build needs and cannot install it:" >&2
    for h in $(missing_headers); do echo "  $h (package ${needed[$h]})" >&2; done
    have_gtest || echo "  GoogleTest (package libgtest-dev)" >&2
    echo "Either install those packages, or on a machine that has them run tools/pack-host-deps.sh" >&2
    echo "and copy the checkout with its .deps/ folder here." >&2
    exit 1
fi

extra=()
if [ -n "${KWB_DEPS_PREFIX:-}" ]; then
    prefix="$(cd "$KWB_DEPS_PREFIX" && pwd)"
    # Hosts without -dev packages still ship the runtime libraries; link names CMake can find.
    mkdir -p "$prefix/lib"
    for lib in curl sqlite3 crypto pcre2-8; do
        if ! ls /usr/lib/x86_64-linux-gnu/lib$lib.so >/dev/null 2>&1; then
            runtime="$(ls /usr/lib/x86_64-linux-gnu/lib$lib.so.* 2>/dev/null | head -n1 || true)"
            [ -n "$runtime" ] && ln -sf "$runtime" "$prefix/lib/lib$lib.so"
        fi
    done
    extra+=("-DCMAKE_PREFIX_PATH=$prefix" "-DCMAKE_INCLUDE_PATH=$prefix/include" "-DCMAKE_LIBRARY_PATH=$prefix/lib")
fi

# The sandbox: the host's bubblewrap, else the one tools/pack-host-deps.sh bundled in .deps/sandbox
# (Debian's; it needs only libc, libcap and libselinux) where it can create namespaces here.
# Without one every evaluation runs unconfined (sandbox_weak), and the adversarial table's escape
# cases reach what they look for. GPU hosts such as ours ship none.
if [ -z "${KWB_BWRAP:-}" ] && ! command -v bwrap >/dev/null && [ -x "$repo/.deps/sandbox/bwrap" ]; then
    if "$repo/.deps/sandbox/bwrap" --ro-bind / / --unshare-pid --unshare-net --dev /dev --proc /proc true; then
        export KWB_BWRAP="$repo/.deps/sandbox/bwrap"
    else
        echo "== the bundled bubblewrap cannot create namespaces on this host"
    fi
fi
echo "== sandbox: ${KWB_BWRAP:-$(command -v bwrap || echo 'none: evaluations run unconfined')}"
echo "== host: $(uname -n), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo 'no nvidia-smi')"
echo "== python: $python ($("$python" -c 'import torch; print("torch", torch.__version__)'))"
cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKWB_BUILD_GUI=OFF -DKWB_BUILD_TESTS=ON \
    -DKWB_PYTHON_EXECUTABLE="$python" "${extra[@]}"
# What the `gpu` label's tests run, and no more: the CPU tests have their own machines. libtorch's
# GPU tests exist where the host's torch was found.
targets=(kwb kwb_cupti_inject kwb_gpu_tests kwb_adversarial_gpu_tests)
if grep -q '^kwb_torch_gpu_tests:' <<<"$(ninja -C "$build" -t targets all 2>/dev/null)"; then
    targets+=(kwb_torch_gpu_tests)
fi
started=$(date +%s)
cmake --build "$build" --target "${targets[@]}"
echo "== built ${targets[*]} in $(($(date +%s) - started)) s"
# KWB_BUILD_ONLY=1: stop here (bench scripts run their own selection of tests).
[ "${KWB_BUILD_ONLY:-0}" = 1 ] && exit 0
"$build/app/cli/kwb" --version
"$build/app/cli/kwb" doctor --python "$python"
cd "$build"
# Two passes, KWB_GPU_TEST_JOBS (default 4) at a time. The tests outside the adversarial table
# assert correctness, timeouts and recordings, never a speed-up, so they may share the GPU, even
# with the test whose kernel spins until its stage's timeout. The adversarial table expects the
# speed milestone of its honest-looking cases, so it runs apart from them (4 at a time is how
# bench/gpu_integrity.sh has run it on the GPU).
jobs="${KWB_GPU_TEST_JOBS:-4}"
failed=0
started=$(date +%s)
ctest -L gpu -E AdversarialGpu -j "$jobs" --output-on-failure || failed=1
echo "== GPU tests outside the adversarial table: $(($(date +%s) - started)) s"
started=$(date +%s)
ctest -L gpu -R AdversarialGpu -j "$jobs" --output-on-failure || failed=1
echo "== the adversarial table on the GPU: $(($(date +%s) - started)) s"
exit "$failed"
