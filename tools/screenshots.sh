#!/usr/bin/env bash
# Regenerates docs/screenshots/ from the built app (--screenshot renders the main window
# offscreen). Every picture shows real inputs: a bundled task, workspaces made by `kwb workspace
# init`, Nsight Compute pages recorded on the H200 (tests/data/ncu), and a 1M-kernel trace file
# written by the timeline benchmark. Nothing here needs a GPU.
#
#   tools/screenshots.sh [BUILD_DIR]     (default build/release)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/release}
app=$build/app/gui/kernel-workbench
kwb=$build/app/cli/kwb
bench=$build/bench/kwb_timeline_bench
out=$root/docs/screenshots
for binary in "$app" "$kwb"; do
    [[ -x $binary ]] || { echo "screenshots: $binary is not built (cmake --build $build)" >&2; exit 1; }
done

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$out"
export QT_QPA_PLATFORM=offscreen KWB_RESOURCES=$root/resources
# A state folder of their own keeps the pictures' runs out of the user's store (--screenshot
# already starts from default settings, never the user's).
export KWB_STATE_DIR=$scratch/state
task=$root/resources/tasks/01_gelu.py

shot() { # FILE SIZE ARGS...
    local file=$1 size=$2
    shift 2
    "$app" --screenshot "$out/$file" --size "$size" "$@" >/dev/null 2>&1 ||
        { echo "screenshots: $file failed" >&2; return 1; }
    echo "screenshots: docs/screenshots/$file"
}

"$kwb" workspace init --fast --with-solution "$task" "$scratch/gelu-fast" >/dev/null
"$kwb" workspace init --with-solution "$task" "$scratch/gelu-cuda-agent" >/dev/null

shot welcome.png 1366x768 --task "$task" --view welcome
shot window-1366x768-light.png 1366x768 --task "$task" --theme light
shot workspace-fast-path.png 1600x1000 --workspace "$scratch/gelu-fast"
shot workspace-cuda-agent-layout.png 1600x1000 --workspace "$scratch/gelu-cuda-agent"
# The cursor on the loop's load: the PTX lines made from it are marked beside the source.
shot assembly-source-ptx.png 1600x1000 --workspace "$scratch/gelu-fast" --view assembly \
    --file kernels/gelu.cu:18
shot counters-roofline-1366x768.png 1366x768 --task "$task" --view counters \
    --counters "$root/tests/data/ncu/details.csv" --counters "$root/tests/data/ncu/raw.csv"
shot rollouts-1600x1000.png 1600x1000 --task "$task" --view rollouts
shot training-1600x1000.png 1600x1000 --task "$task" --view training
# The H200 tuning run of 2026-12-04 (bench/results), its files as `kwb train tune` wrote them.
mkdir -p "$scratch/tuning-run-5"
for part in config.json samples.jsonl steps.jsonl summary.json; do
    cp "$root/bench/results/2026-12-04-h200-tuning-run-5-${part%.*}.${part##*.}" \
        "$scratch/tuning-run-5/$part"
done
shot kernel-tuning-1600x1200.png 1600x1200 --task "$task" --tuning-run "$scratch/tuning-run-5"
if [[ -x $bench ]]; then
    # The benchmark writes its synthetic 1M-kernel run as a kwb-cupti record file, then loads it.
    "$bench" --frames 1 --from-file "$scratch/synthetic_1m.jsonl" >/dev/null 2>&1
    shot timeline-1m-kernels.png 1600x1000 --task "$task" --view timeline \
        --trace "$scratch/synthetic_1m.jsonl"
else
    echo "screenshots: $bench is not built; timeline-1m-kernels.png left as it is" >&2
fi
