#!/usr/bin/env bash
# Issue 20's evidence: the headless bundle (tools/headless-bundle.sh) on a freshly started GPU
# host with no build step. Unpacks the tarball, and with an environment stripped to PATH and
# HOME (plus KWB_PYTHON, the host's python3 with torch) runs kwb --version, kwb info, kwb doctor,
# then kwb eval of a bundled task's solution in both workspace layouts, on the GPU where there is
# one. Prints a report for bench/results/ (date, GPU, driver, torch, each command's output and
# wall time) and leaves the JSON results under $OUT when it is set.
#
#   bench/gpu_headless_bundle.sh [TARBALL]
#   (device tool: carry build/headless-bundle/kernel-workbench-headless-<version>-x86_64.tar.gz)
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tarball=${1:-$(ls "$repo"/build/headless-bundle/kernel-workbench-headless-*.tar.gz 2>/dev/null | head -n 1)}
[[ -f $tarball ]] || { echo "no bundle: run tools/headless-bundle.sh first" >&2; exit 2; }
out=${OUT:-}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
python=${KWB_PYTHON:-$(command -v python3)}
status=0

echo "# The headless bundle on a fresh host — $(date -u '+%Y-%m-%d %H:%M UTC')"
echo
echo "- bundle: $(basename "$tarball") ($(du -h "$tarball" | cut -f1))"
echo "- host: $(. /etc/os-release && echo "$PRETTY_NAME"), glibc $(ldd --version | head -n 1 | awk '{print $NF}')"
if command -v nvidia-smi >/dev/null; then
    echo "- GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n 1)"
fi
echo "- python: $python, $("$python" -c 'import torch; print("torch", torch.__version__)' 2>&1)"
echo "- toolkits on the host: $(ls -d /usr/local/cuda*/ 2>/dev/null | tr '\n' ' ')"
echo

start=$SECONDS
tar -xzf "$tarball" -C "$scratch"
bundle=$(ls -d "$scratch"/kernel-workbench-headless-*)
echo "unpacked in $((SECONDS - start)) s to $bundle (no build step)"
mkdir -p "$scratch/home"
bare() { env -i PATH=/usr/bin:/bin HOME="$scratch/home" KWB_PYTHON="$python" "$@"; }

step() { # TITLE COMMAND...: runs it, prints its output and wall time, remembers a failure
    local title=$1
    shift
    echo
    echo "## $title"
    echo '```'
    local begin=$SECONDS
    "$@" 2>&1 | tail -n 60
    local rc=${PIPESTATUS[0]}
    echo '```'
    echo "exit $rc, $((SECONDS - begin)) s"
    [[ $rc == 0 ]] || status=1
}

step "libraries: every one inside the bundle or the host's C and C++ runtimes" \
    bash -c "ldd '$bundle/bin/kwb' | awk '\$3 ~ /^\\// { print \$1, \$3 }'"
step "kwb --version" bare "$bundle/bin/kwb" --version
step "kwb info" bare "$bundle/bin/kwb" info
step "kwb doctor" bare "$bundle/bin/kwb" doctor
task=$bundle/share/kernel-workbench/resources/tasks/01_gelu.py
bare "$bundle/bin/kwb" workspace init --with-solution "$task" "$scratch/ws-cuda-agent" >/dev/null
bare "$bundle/bin/kwb" workspace init --fast --with-solution "$task" "$scratch/ws-fast" >/dev/null
for layout in cuda-agent fast; do
    # An honest solution must keep its reward: a run that ends but pays nothing is a failure.
    step "kwb eval, 01_gelu's solution, ${layout} layout" bash -c \
        "started=\$(date +%s); env -i PATH=/usr/bin:/bin HOME='$scratch/home' KWB_PYTHON='$python' \
         '$bundle/bin/kwb' eval '$scratch/ws-$layout' --json > '$scratch/eval-$layout.json'; rc=\$?; \
         python3 '$repo/bench/evaluation_line.py' --honest '$layout' \$started '$scratch/eval-$layout.json' || rc=1; exit \$rc"
    [[ -n $out ]] && cp "$scratch/eval-$layout.json" "$out/" 2>/dev/null
done
echo
echo "overall: $([[ $status == 0 ]] && echo passed || echo FAILED)"
exit $status
