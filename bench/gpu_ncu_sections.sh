#!/usr/bin/env bash
# Records Nsight Compute's output on a GPU host for the counters view's parser tests (issue 19,
# item 5): bench/ncu/workload.py's kernels profiled with the section sets the workbench offers,
# saved as a report and printed from it as CSV (details and raw pages, with and without base
# units), with the tool's version, help and section list. Everything goes to $OUT/ncu.
set -uo pipefail
out="${OUT:-/tmp/kwb-ncu}/ncu"
mkdir -p "$out"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ncu="$(command -v ncu || echo /usr/local/cuda/bin/ncu)"
{
    echo "date: $(date -u +%FT%TZ)"
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
    "$ncu" --version | tail -1
    python3 -c 'import torch; print("torch", torch.__version__)'
} > "$out/versions.txt" 2>&1
"$ncu" --help > "$out/help.txt" 2>&1
"$ncu" --list-sections > "$out/sections.txt" 2>&1
started=$(date +%s)
"$ncu" --section SpeedOfLight --section SpeedOfLight_RooflineChart --section MemoryWorkloadAnalysis \
    --section Occupancy --launch-count 8 --export "$out/workload" --force-overwrite \
    python3 "$here/ncu/workload.py" > "$out/profile.log" 2>&1
echo "ncu profile: exit $?, $(($(date +%s) - started)) s"
report="$out/workload.ncu-rep"
"$ncu" --import "$report" --csv --page details > "$out/details.csv" 2> "$out/details.err"
"$ncu" --import "$report" --csv --page details --print-units base > "$out/details-base.csv" 2>&1
"$ncu" --import "$report" --csv --page raw > "$out/raw.csv" 2>&1
"$ncu" --import "$report" --page details > "$out/details.txt" 2>&1
"$ncu" --import "$report" --print-format json --page details > "$out/details.json" 2>&1 ||
    echo "no JSON output from this ncu" >> "$out/details.json"
# One kernel printed straight to CSV, as a run without a report does.
"$ncu" --section SpeedOfLight --launch-count 1 --csv python3 "$here/ncu/workload.py" \
    > "$out/direct.csv" 2>&1
ls -la "$out"
head -c 1500 "$out/details.csv"
