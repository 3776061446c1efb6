#!/usr/bin/env bash
# The headless bundle for GPU servers: a tarball with kwb (no Qt), the CUPTI injection library
# and its CUPTI, the harness and bundled tasks, Debian's bubblewrap, kwb's man pages, and every
# shared library kwb needs beyond the C and C++ runtimes (curl and its TLS stack, SQLite,
# simdjson, PCRE2, OpenSSL), found by its RUNPATH ($ORIGIN/../lib). A server with an NVIDIA
# driver, the CUDA toolkit's NVRTC (or KWB_NVRTC_LIBRARY) and a Python with torch runs it
# unpacked, with no build step. glibc 2.36 or newer (Debian 12, Ubuntu 23.04 and later).
#
#   tools/headless-bundle.sh [--no-check]   -> build/headless-bundle/kernel-workbench-headless-<version>-<arch>.tar.gz
#
# The check unpacks it into a scratch folder and, with an environment stripped to PATH and HOME,
# runs kwb --version, kwb info (its own tasks and profiler library), and kwb eval of a bundled
# solution on the CPU.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$repo/build/headless-bundle
check=1
[[ ${1:-} == --no-check ]] && check=0
say() { printf '\033[1m==> %s\033[0m\n' "$*"; }
fail() { printf 'headless-bundle: FAIL: %s\n' "$*" >&2; exit 1; }

start=$SECONDS
# Its own build folder: the install RPATH differs from the headless preset's. DT_RPATH, not
# RUNPATH (--disable-new-dtags): an executable's RPATH also serves the libraries it loads, so
# the bundled libcurl finds the bundled libnghttp2, not the host's (or none).
cmake --preset headless -S "$repo" -B "$build/cmake" -DKWB_BUILD_TESTS=OFF \
    -DCMAKE_INSTALL_RPATH='$ORIGIN/../lib' -DKWB_INJECTION_EXTRA_RPATH='$ORIGIN/../..' \
    -DCMAKE_EXE_LINKER_FLAGS=-Wl,--disable-new-dtags \
    -DCMAKE_SHARED_LINKER_FLAGS=-Wl,--disable-new-dtags >/dev/null
cmake --build "$build/cmake" --target kwb kwb_cupti_inject kwb_changelog
cmake --build "$build/cmake" --target kwb_man_pages
version=$("$build/cmake/app/cli/kwb" --version | awk 'NR == 1 { print $2 }')
name=kernel-workbench-headless-$version-$(uname -m)
stage=$build/$name
rm -rf "$stage" "$build/$name.tar.gz"
cmake --install "$build/cmake" --prefix "$stage" --component Unspecified >/dev/null
# Desktop files are for the GUI's package.
rm -rf "$stage/share/applications" "$stage/share/metainfo" "$stage/share/icons" "$stage/share/mime"

# Libraries: what the loader resolves for kwb and the injection library, but the C and C++
# runtimes every host has (and must provide itself: glibc cannot travel), the driver and
# NVRTC (dlopen'ed from the host's driver and toolkit), and CUPTI (shipped beside the library).
mkdir -p "$stage/lib"
system='^(linux-vdso|ld-linux|libc\.so|libm\.so|libpthread|libdl\.so|librt\.so|libresolv|libutil\.so|libstdc\+\+|libgcc_s|libcuda\.so|libnvrtc|libcupti)'
for binary in "$stage/bin/kwb" "$stage"/lib/*/kernel-workbench/libkwb_cupti_inject.so; do
    ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' | while read -r soname path; do
        [[ $soname =~ $system ]] && continue
        cp -L -n "$path" "$stage/lib/$soname"
    done
done
mkdir -p "$stage/libexec/kernel-workbench"
if [[ -x /usr/bin/bwrap ]]; then
    # Needs only libc, libcap and libselinux, which every Debian and Ubuntu has.
    cp /usr/bin/bwrap "$stage/libexec/kernel-workbench/bwrap"
fi
cat > "$stage/README" <<EOF
Kernel Workbench $version, headless (kwb) for GPU servers.

  bin/kwb doctor                       what this machine has: driver, NVRTC, Python + torch, sandbox
  bin/kwb workspace init --with-solution share/kernel-workbench/resources/tasks/01_gelu.py ws
  bin/kwb eval ws                      compile, verify, profile, reward
  man -l share/man/man1/kwb.1.gz       every subcommand has its page (kwb-eval.1.gz, ...)

Needs: an NVIDIA driver (libcuda.so.1) for GPU work, the CUDA toolkit's NVRTC (found in
/usr/local/cuda or through KWB_NVRTC_LIBRARY), a Python with torch (KWB_PYTHON, or python3 on
PATH), and glibc 2.36 or newer. Everything else is in lib/ and libexec/.
EOF
tar -C "$build" -czf "$build/$name.tar.gz" "$name"
say "built $name.tar.gz ($(du -h "$build/$name.tar.gz" | cut -f1), $(ls "$stage/lib" | wc -l) libraries) in $((SECONDS - start)) s"
[[ $check == 1 ]] || exit 0

say "the bundle unpacked elsewhere, with a bare environment"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
tar -C "$scratch" -xzf "$build/$name.tar.gz"
unpacked=$scratch/$name
# Every library resolves inside the bundle or to the host's C and C++ runtimes.
for binary in "$unpacked/bin/kwb" "$unpacked"/lib/*/kernel-workbench/libkwb_cupti_inject.so; do
    ! ldd "$binary" | grep -q "not found" || fail "$(basename "$binary"): $(ldd "$binary" | grep "not found")"
    ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' | while read -r soname path; do
        [[ $soname =~ $system || $path == "$unpacked"/* ]] ||
            fail "$(basename "$binary") loads $path from the build machine"
    done
done
python=$("$repo/build/release/app/cli/kwb" info 2>/dev/null | awk '/\(project venv\)|\(KWB_PYTHON\)|\(settings\)|\(PATH\)/ { print $1; exit }' || true)
[[ -x ${python:-} ]] || python=$(command -v python3)
mkdir -p "$scratch/home"
bare() { env -i PATH=/usr/bin:/bin HOME="$scratch/home" KWB_PYTHON="$python" "$@"; }
bare "$unpacked/bin/kwb" --version | head -n 1 | grep -q "^kwb $version" || fail "kwb --version"
bare "$unpacked/bin/kwb" info | tee "$scratch/info.txt"
grep -q "Tasks:    $unpacked/share/kernel-workbench/resources/tasks" "$scratch/info.txt" ||
    fail "kwb does not use the bundle's tasks"
grep -q "Profiler: $unpacked/lib/.*/kernel-workbench/libkwb_cupti_inject.so" "$scratch/info.txt" ||
    fail "kwb does not find the bundle's injection library"
bare "$unpacked/bin/kwb" doctor | tee "$scratch/doctor.txt" || fail "kwb doctor"
grep -q '^\[ok\]   CUDA toolkit (NVRTC)' "$scratch/doctor.txt" || fail "kwb doctor: NVRTC"
task=$unpacked/share/kernel-workbench/resources/tasks/03_softmax.py
bare "$unpacked/bin/kwb" workspace init --with-solution "$task" "$scratch/ws" >/dev/null
bare "$unpacked/bin/kwb" eval "$scratch/ws" --device cpu --json > "$scratch/eval.json" ||
    fail "kwb eval exited $?"
"$python" - "$scratch/eval.json" <<'PY' || fail "kwb eval's result"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["correct"] is True and r["reward"] >= 1, {k: r.get(k) for k in ("reward", "correct", "failure_kind", "message")}
print(f"kwb eval from the bundle: reward {r['reward']}, correct on the CPU")
PY
say "bundle checked in $((SECONDS - start)) s: $build/$name.tar.gz"
