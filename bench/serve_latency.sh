#!/usr/bin/env bash
# Wall time of `kwb eval` from the shell through `kwb serve` and in the calling process.
#   bench/serve_latency.sh [KWB] [DEVICE] [REPEATS] [TARGET]
# TARGET pair (default): `kwb eval --fast` on the KernelBench-style pair in tests/data/pair (plain
#   PyTorch: no extension build), through the daemon and without it.
# TARGET workspace: the bundled 01_gelu task in the CUDA-Agent layout with its solution; before
#   every call one line of kernels/gelu.cu changes (a constant's spelling), so each call rebuilds
#   the extension: `kwb eval --fast` (the instant loop) and plain `kwb eval` (the full evaluation),
#   both through the daemon; then the same edits through the workspace's own scripts
#   (utils/compile.sh, verification, profiling: one process per tool call, as an agent in CUDA
#   Agent's workspace runs them), the anchor of the latency goal.
# TARGET fastpath: the same task and edit in the fast-path layout (NVRTC kernels, no extension):
#   `kwb eval --fast` through the daemon, the shell's version of the GUI's edit loop.
# KWB_EDIT_PAUSE=S (default 0): seconds between one call's result and the next edit, the time a
#   user takes to change a line. Between evaluations the warm worker's standby children create
#   their CUDA context and prepare the reference side; an edit that comes sooner waits for them.
set -eu
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
kwb="${1:-$repo/build/release/app/cli/kwb}"
device="${2:-cpu}"
repeats="${3:-5}"
target="${4:-pair}"
export XDG_RUNTIME_DIR="$(mktemp -d)"
chmod 700 "$XDG_RUNTIME_DIR"
export KWB_RESOURCES="${KWB_RESOURCES:-$repo/resources}"
trap '"$kwb" serve stop >/dev/null 2>&1 || true; rm -rf "$XDG_RUNTIME_DIR"' EXIT
pair=("$repo/tests/data/pair/reference.py" --candidate "$repo/tests/data/pair/candidate.py" --device "$device" --fast --json)
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ), host: $(nproc) cores, kwb: $("$kwb" --version | head -n1)"
echo "| call | serve | wall s | record total s | stages |"
echo "|---|---|---|---|---|"
[ "$target" = pair ] && for mode in on $(for _ in $(seq "$repeats"); do echo on; done) $(for _ in $(seq "$repeats"); do echo off; done); do
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

[ "$target" = workspace ] || [ "$target" = fastpath ] || exit 0
ws="$XDG_RUNTIME_DIR/gelu"
modes="fast $(for _ in $(seq "$repeats"); do echo fast; done) full $(for _ in $(seq "$repeats"); do echo full; done)"
if [ "$target" = fastpath ]; then
    "$kwb" workspace init --fast "$repo/resources/tasks/01_gelu.py" "$ws" --with-solution >/dev/null
    modes="fast $(for _ in $(seq "$repeats"); do echo fast; done)"
else
    "$kwb" workspace init "$repo/resources/tasks/01_gelu.py" "$ws" --with-solution >/dev/null
fi
edit=0
pause="${KWB_EDIT_PAUSE:-0}"
echo "pause between a result and the next edit: $pause s"
for mode in $modes; do
    [ "$edit" -gt 0 ] && sleep "$pause"
    # One line changes: the same constant, spelled with one more trailing zero each time.
    edit=$((edit + 1))
    zeros=$(printf '0%.0s' $(seq "$edit"))
    sed -i -E "s/(kSqrt2OverPi = 0\.7978845608028654)0*f/\1${zeros}f/" "$ws/kernels/gelu.cu"
    flag=()
    [ "$mode" = fast ] && flag=(--fast)
    start=$(date +%s.%N)
    "$kwb" eval "$ws" --device "$device" --json "${flag[@]}" --serve on >"$XDG_RUNTIME_DIR/r.json" 2>/dev/null || true
    end=$(date +%s.%N)
    python3 - "$XDG_RUNTIME_DIR/r.json" "$mode" "$start" "$end" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
wall = float(sys.argv[4]) - float(sys.argv[3])
stages = " ".join("%s %.2f" % (s["name"], s["seconds"]) for s in r["stages"])
print("| %s edit | reward %s | %.2f | %.2f | %s |" % (sys.argv[2], r.get("reward"), wall, r["total_seconds"], stages))
# Where verify's and profile's time went inside the stage (the harness's phase clock), for the
# latency goal's next step; to stderr, so the table stays one block.
# With the stage process's own time ("stage time: ... in the stage process") and the engine's
# (the record's seconds): what lies between them is the process start, the warm server's round
# trip and the result's reading.
for s in r["stages"]:
    for line in s.get("log", "").splitlines():
        if line.startswith("phase times:"):
            print("  %s %s: %s" % (sys.argv[2], s["name"], line[len("phase times: "):]), file=sys.stderr)
        elif line.startswith("prepared before the request:"):
            # A standby child's preparation, and how long the request waited for it to finish.
            print("  %s %s: %s" % (sys.argv[2], s["name"], line), file=sys.stderr)
        elif line.startswith("stage time:"):
            print("  %s %s: engine %.3fs, %s" % (sys.argv[2], s["name"], s["seconds"], line[len("stage time: "):]),
                  file=sys.stderr)
PY
done

[ "$target" = workspace ] || exit 0
# The same one-line edits through the workspace's own scripts, one process per tool call as an
# agent in CUDA Agent's workspace runs them (the anchor of issue 16's latency goal): compile,
# verification and profiling, each after the edit, in the same call as the daemon's figures.
python="${KWB_PYTHON:-$(command -v python3)}"
echo
echo "| edit | workspace scripts | wall s | compile s | verification s | profiling s |"
echo "|---|---|---|---|---|---|"
for _ in $(seq "$repeats"); do
    edit=$((edit + 1))
    zeros=$(printf '0%.0s' $(seq "$edit"))
    sed -i -E "s/(kSqrt2OverPi = 0\.7978845608028654)0*f/\1${zeros}f/" "$ws/kernels/gelu.cu"
    times=()
    rc=0
    start=$(date +%s.%N)
    for step in "bash utils/compile.sh" "$python -m utils.verification" "$python -m utils.profiling"; do
        t0=$(date +%s.%N)
        (cd "$ws" && KWB_PYTHON="$python" KWB_DEVICE="$device" $step >"$XDG_RUNTIME_DIR/step.out" 2>&1) || rc=$?
        times+=("$(python3 -c "print('%.2f' % ($(date +%s.%N) - $t0))")")
    done
    wall=$(python3 -c "print('%.2f' % ($(date +%s.%N) - $start))")
    echo "| scripts | rc $rc | $wall | ${times[0]} | ${times[1]} | ${times[2]} |"
done
