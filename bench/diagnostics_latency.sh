#!/usr/bin/env bash
# Compile-diagnostics latency for a ~200-line kernel file (bench/data/kernel_200_lines.cu):
#   1. NVRTC in-process (what the editor uses for device code), RUNS compiles: the full compile
#      (diagnostics, PTX, ptxas -v resources) and the front end alone (-fdevice-syntax-only);
#   2. nvcc -c of the same single file (the path for files with host code), RUNS compiles;
#   3. the DiagnosticsService after a burst of keystroke-like edits: the time from the last edit
#      to its diagnostics (syntax-only step) and to its full result, with the editor's 150 ms
#      debounce and with none, BURSTS times each.
# p50/p90 by nearest rank. Needs only the kwb binary and python3 (for the JSON); no GPU (with a
# GPU, the GPU's arch is the target). Issue 5's goal: NVRTC p50 <= 150 ms on the H200 host.
#   diagnostics_latency.sh KWB [RUNS=20] [BURSTS=5]
set -euo pipefail
kwb="${1:?usage: diagnostics_latency.sh KWB [RUNS] [BURSTS]}"
runs="${2:-20}"
bursts="${3:-5}"
here="$(cd "$(dirname "$0")" && pwd)"
kernel="$here/data/kernel_200_lines.cu"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

echo "# Diagnostics latency"
echo
echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "- host: $(hostname)"
echo "- CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores visible"
echo "- load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
"$kwb" --version | sed 's/^/- /'
if command -v nvidia-smi >/dev/null 2>&1; then
    echo "- GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
else
    echo "- GPU: none"
fi
echo "- kernel file: bench/data/kernel_200_lines.cu ($(wc -l < "$kernel") lines)"
echo

# CPU seconds (user + sys) of each whole run, children included, next to the wall-clock
# percentiles: on a shared machine the wall clock also counts the wait for a core.
TIMEFORMAT='%U %S'
for mode in nvrtc syntax nvcc; do
    case "$mode" in
        nvrtc) args=(--path nvrtc) ;;
        syntax) args=(--path nvrtc --syntax-only) ;;
        nvcc) args=(--path nvcc) ;;
    esac
    { time "$kwb" nvrtc "$kernel" "${args[@]}" --repeat "$runs" --json > "$tmp/$mode.json" || true; } \
        2> "$tmp/$mode.cpu"
done
for i in $(seq "$bursts"); do
    "$kwb" nvrtc "$kernel" --burst 10 --burst-interval-ms 30 --debounce-ms 150 --json \
        > "$tmp/burst150_$i.json" || true
    "$kwb" nvrtc "$kernel" --burst 10 --burst-interval-ms 30 --debounce-ms 0 --json \
        > "$tmp/burst0_$i.json" || true
done
echo "- load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

python3 - "$tmp" "$runs" "$bursts" <<'PY'
import glob, json, math, os, sys
tmp, runs, bursts = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

def load(name):
    with open(os.path.join(tmp, name)) as f:
        return json.load(f)

def rank(values, p):
    values = sorted(values)
    return values[max(1, math.ceil(p * len(values))) - 1]

print("| path | arch | kernels | runs | p50 ms | p90 ms | min ms | max ms | first ms | CPU ms per run |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for name in ("nvrtc", "syntax", "nvcc"):
    r = load(name + ".json")
    if not r["success"]:
        print(f"| {name} | compile failed: {r['diagnostics'][:1]} |")
        continue
    t = r.get("repeat", {"all_ms": [r["compile_ms"]]})
    ms = t["all_ms"]
    label = r["compile_path"] + (" front end only" if r.get("syntax_only") else "")
    with open(os.path.join(tmp, name + ".cpu")) as f:
        cpu = sum(float(x) for x in f.read().split()[-2:]) * 1000 / len(ms)
    print(f"| {label} | {r['arch']} | {len(r['kernels'])} | {len(ms)} | {rank(ms, .5):.0f} | "
          f"{rank(ms, .9):.0f} | {min(ms):.0f} | {max(ms):.0f} | {ms[0]:.0f} | {cpu:.0f} |")
print()
print("DiagnosticsService, 10 edits 30 ms apart, time from the last edit to its diagnostics")
print("(the syntax-only step) and to its full result (PTX, resources):")
print()
print("| debounce ms | bursts | diagnostics p50 ms | p90 ms | full result p50 ms | p90 ms | requests started per burst | compiles cancelled per burst |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
for debounce in (150, 0):
    results = [load(os.path.basename(p))["burst"] for p in sorted(glob.glob(os.path.join(tmp, f"burst{debounce}_*.json")))]
    first = [b["first_result_ms"] for b in results]
    lat = [b["latest_result_ms"] for b in results]
    started = sorted(b["requests_started"] for b in results)
    cancelled = sorted(b["compiles_cancelled"] for b in results)
    print(f"| {debounce} | {len(lat)} | {rank(first, .5):.0f} | {rank(first, .9):.0f} | "
          f"{rank(lat, .5):.0f} | {rank(lat, .9):.0f} | "
          f"{started[0]}-{started[-1]} | {cancelled[0]}-{cancelled[-1]} |")
PY
