#!/usr/bin/env bash
# `kwb timeline` on a machine without a GPU: a clear message and a non-zero exit, never a trace,
# and no `kwb serve` daemon started for it, whatever --serve says.
#   timeline_no_gpu.sh KWB WORKSPACE_PARENT
set -u
kwb="$1"
dir="$2/timeline-no-gpu"
if nvidia-smi -L >/dev/null 2>&1; then
    echo "SKIPPED: this machine has a GPU"
    exit 0
fi
rm -rf "$dir" && mkdir -p "$dir/ws" "$dir/runtime"
chmod 700 "$dir/runtime"
export XDG_RUNTIME_DIR="$dir/runtime"
for serve in auto on off; do
    "$kwb" timeline "$dir/ws" --out "$dir/trace.json" --serve "$serve" >"$dir/out.txt" 2>&1
    code=$?
    cat "$dir/out.txt"
    [ "$code" -ne 0 ] || { echo "FAIL: --serve $serve: exit code 0"; exit 1; }
    grep -q "no CUDA device" "$dir/out.txt" || { echo "FAIL: --serve $serve: no 'no CUDA device' message"; exit 1; }
    [ ! -e "$dir/trace.json" ] || { echo "FAIL: --serve $serve: a trace was written"; exit 1; }
    if "$kwb" serve status >/dev/null 2>&1; then
        "$kwb" serve stop >/dev/null 2>&1
        echo "FAIL: --serve $serve started a kwb serve daemon for a timeline no GPU can record"
        exit 1
    fi
done
echo "ok: exit $code, no daemon"
