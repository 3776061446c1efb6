#!/usr/bin/env bash
# Wall time of `kwb eval --fast` from the shell through `kwb serve` and in the calling process,
# on the KernelBench-style pair in tests/data/pair (plain PyTorch: no extension build).
#   bench/serve_latency.sh [KWB] [DEVICE] [REPEATS]
set -eu
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
kwb="${1:-$repo/build/release/app/cli/kwb}"
device="${2:-cpu}"
repeats="${3:-5}"
export XDG_RUNTIME_DIR="$(mktemp -d)"
chmod 700 "$XDG_RUNTIME_DIR"
export KWB_RESOURCES="${KWB_RESOURCES:-$repo/resources}"
trap '"$kwb" serve stop >/dev/null 2>&1 || true; rm -rf "$XDG_RUNTIME_DIR"' EXIT
pair=("$repo/tests/data/pair/reference.py" --candidate "$repo/tests/data/pair/candidate.py" --device "$device" --fast --json)
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ), host: $(nproc) cores, kwb: $("$kwb" --version | head -n1)"
echo "| call | serve | wall s | record total s | stages |"
echo "|---|---|---|---|---|"
for mode in on $(for _ in $(seq "$repeats"); do echo on; done) $(for _ in $(seq "$repeats"); do echo off; done); do
    start=$(date +%s.%N)
    "$kwb" eval "${pair[@]}" --serve "$mode" >"$XDG_RUNTIME_DIR/r.json" 2>/dev/null || true
    end=$(date +%s.%N)
    python3 - "$XDG_RUNTIME_DIR/r.json" "$mode" "$start" "$end" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
wall = float(sys.argv[4]) - float(sys.argv[3])
stages = " ".join("%s %.2f" % (s["name"], s["seconds"]) for s in r["stages"])
print("| eval | %s | %.2f | %.2f | %s |" % (sys.argv[2], wall, r["total_seconds"], stages))
PY
done
