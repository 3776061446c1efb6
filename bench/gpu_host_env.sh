# Sourced by the short bench/gpu_*.sh runs: the GPU host's environment and a minimal configure of
# the Qt-free build there (no libtorch in-process, the carried .deps for headers the host lacks).
# Sets repo, build and prefix; prints the date and the GPU for bench/results.
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$repo/build/gpu-host"
prefix="$repo/.deps/prefix"
export PATH="/usr/local/cuda/bin:$PATH"
export LD_LIBRARY_PATH="/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ), gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"

# configure_gpu_host_build [CMAKE_ARGS...]
configure_gpu_host_build() {
    mkdir -p "$prefix/lib"
    # Hosts without -dev packages still ship the runtime libraries; link names CMake can find.
    for lib in curl sqlite3 crypto pcre2-8; do
        ls /usr/lib/x86_64-linux-gnu/lib$lib.so >/dev/null 2>&1 ||
            ln -sf "$(ls /usr/lib/x86_64-linux-gnu/lib$lib.so.* | head -n1)" "$prefix/lib/lib$lib.so"
    done
    KWB_GTEST_SOURCE="$repo/.deps/googletest" cmake -S "$repo" -B "$build" -G Ninja \
        -DCMAKE_BUILD_TYPE=Release -DKWB_BUILD_GUI=OFF -DKWB_WITH_TORCH=OFF \
        -DKWB_PYTHON_EXECUTABLE="$(command -v python3)" -DCMAKE_PREFIX_PATH="$prefix" \
        -DCMAKE_INCLUDE_PATH="$prefix/include" -DCMAKE_LIBRARY_PATH="$prefix/lib" "$@" >/dev/null
}

# The bundled bubblewrap (tools/pack-host-deps.sh), where the host has none and it runs here:
# without it every evaluation runs `sandbox_weak` and the sandbox-escape cases reach what they
# look for.
use_bundled_bubblewrap() {
    if ! command -v bwrap >/dev/null && [ -x "$repo/.deps/sandbox/bwrap" ] &&
        "$repo/.deps/sandbox/bwrap" --ro-bind / / --unshare-pid --unshare-net --dev /dev --proc /proc true 2>/dev/null; then
        export KWB_BWRAP="$repo/.deps/sandbox/bwrap"
    fi
}
