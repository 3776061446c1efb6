#!/usr/bin/env bash
# The workspace's own scripts, as an agent in CUDA Agent's workspace runs them: a solution
# compiles, verifies and profiles through utils/, and a broken kernel fails compile with its file
# and line. The extension lands in KWB_CACHE_DIR (kwb's own rule), not in ~/.cache.
# KWB_TEST_DEVICE=cuda runs it on the GPU (exit 77 without one), where verification and profiling
# fork the candidate's process after the same script compiled: CUDA must not be initialised yet.
#   workspace_scripts.sh KWB PYTHON REPO
set -euo pipefail
kwb="$1"; python="$2"; repo="$3"
device="${KWB_TEST_DEVICE:-cpu}"
if [ "$device" = cuda ] && ! nvidia-smi -L 2>/dev/null | grep -q GPU; then
    echo "SKIP: no GPU"; exit 77
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
ws="$tmp/ws"
"$kwb" workspace init "$repo/resources/tasks/07_scale_residual_add.py" "$ws" --with-solution >/dev/null
export KWB_PYTHON="$python" KWB_DEVICE="$device" KWB_CACHE_DIR="$tmp/cache"
cd "$ws"
bash utils/compile.sh > "$tmp/compile.out" 2>&1 || { cat "$tmp/compile.out"; echo "FAIL: compile"; exit 1; }
ls "$tmp/cache"/*/ >/dev/null 2>&1 || { ls -R "$tmp" | head -20; echo "FAIL: nothing built into KWB_CACHE_DIR"; exit 1; }
"$python" -m utils.verification > "$tmp/verify.out" 2>&1 || { cat "$tmp/verify.out"; echo "FAIL: verification"; exit 1; }
grep -q "VERIFICATION PASSED.*$device" "$tmp/verify.out" || { cat "$tmp/verify.out"; echo "FAIL: no verdict"; exit 1; }
"$python" -m utils.profiling --no-compile --rounds 2 --iterations 5 > "$tmp/profile.out" 2>&1 \
    || { cat "$tmp/profile.out"; echo "FAIL: profiling"; exit 1; }
grep -Eq "speed-up vs eager: [0-9.]+x" "$tmp/profile.out" || { cat "$tmp/profile.out"; echo "FAIL: no speed-up"; exit 1; }
# A broken kernel: compile fails with the file and line, and exits non-zero.
echo "this is not C++;" >> kernels/scale_residual_cpu.cpp
if bash utils/compile.sh > "$tmp/broken.out" 2>&1; then
    cat "$tmp/broken.out"; echo "FAIL: a broken kernel compiled"; exit 1
fi
grep -q "COMPILE FAILED" "$tmp/broken.out" && grep -q "kernels/scale_residual_cpu.cpp:" "$tmp/broken.out" \
    || { cat "$tmp/broken.out"; echo "FAIL: the compile error does not name the file"; exit 1; }
echo "PASS: compile, verification and profiling through the workspace's scripts"
