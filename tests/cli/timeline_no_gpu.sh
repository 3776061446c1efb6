#!/usr/bin/env bash
# `kwb timeline` on a machine without a GPU: a clear message and a non-zero exit, never a trace.
#   timeline_no_gpu.sh KWB WORKSPACE_PARENT
set -u
kwb="$1"
dir="$2/timeline-no-gpu"
if nvidia-smi -L >/dev/null 2>&1; then
    echo "SKIPPED: this machine has a GPU"
    exit 0
fi
rm -rf "$dir" && mkdir -p "$dir/ws"
"$kwb" timeline "$dir/ws" --out "$dir/trace.json" >"$dir/out.txt" 2>&1
code=$?
cat "$dir/out.txt"
[ "$code" -ne 0 ] || { echo "FAIL: exit code 0"; exit 1; }
grep -q "no CUDA device" "$dir/out.txt" || { echo "FAIL: no 'no CUDA device' message"; exit 1; }
[ ! -e "$dir/trace.json" ] || { echo "FAIL: a trace was written"; exit 1; }
echo "ok: exit $code"
