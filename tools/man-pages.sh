#!/usr/bin/env bash
# Writes man pages for kwb, each of its subcommands (one level of nesting: kwb-episodes-export)
# and kernel-workbench, from the programs' own --help, with Debian's help2man. The build runs it
# (packaging/CMakeLists.txt), so the pages always match the options the binaries take.
#
#   tools/man-pages.sh KWB [KERNEL_WORKBENCH] OUT_DIR
set -euo pipefail

if [[ $# -lt 2 ]]; then
    echo "usage: $0 KWB [KERNEL_WORKBENCH] OUT_DIR" >&2
    exit 2
fi
kwb=$(realpath "$1")
gui=
if [[ $# -ge 3 ]]; then
    gui=$(realpath "$2")
    out=$3
else
    out=$2
fi
command -v help2man >/dev/null || { echo "man-pages: help2man is not installed" >&2; exit 1; }
mkdir -p "$out"
wrappers=$(mktemp -d)
trap 'rm -rf "$wrappers"' EXIT

version=$("$kwb" --version | head -n 1) # "kwb 0.1.0"
number=${version##* }

# The subcommands listed under "Subcommands:" in a --help text, with their one-line summaries.
subcommands() {
    awk '/^Subcommands:/ { listing = 1; next }
         listing && /^  [a-z]/ { name = $1; $1 = ""; sub(/^ +/, ""); print name "\t" $0; next }
         listing && /^[^ ]/ { listing = 0 }'
}

# NAME ARGV0 SUMMARY COMMAND...: one page. A wrapper runs the command under the name the
# usage line should show (help text prints argv[0], which would otherwise be a build path).
page() {
    local name=$1 argv0=$2 summary=$3
    shift 3
    local wrapper=$wrappers/$name
    {
        echo '#!/usr/bin/env bash'
        printf 'exec -a %q' "$argv0"
        printf ' %q' "$@"
        echo ' "$@"'
    } > "$wrapper"
    chmod +x "$wrapper"
    help2man --no-info --no-discard-stderr --section 1 --source "Kernel Workbench $number" \
        --version-string "$number" --name "$summary" --output "$out/$name.1" "$wrapper" \
        </dev/null
}

page kwb kwb "Kernel Workbench's headless CLI: workspaces, evaluation, agents, rollouts, training" \
    "$kwb"
while IFS=$'\t' read -r sub summary; do
    page "kwb-$sub" kwb "$summary" "$kwb" "$sub"
    while IFS=$'\t' read -r nested nestedSummary; do
        page "kwb-$sub-$nested" kwb "$nestedSummary" "$kwb" "$sub" "$nested"
    done < <("$kwb" "$sub" --help | subcommands)
done < <("$kwb" --help | subcommands)

if [[ -n $gui ]]; then
    QT_QPA_PLATFORM=offscreen page kernel-workbench kernel-workbench \
        "optimize GPU kernels with LLM agents and reinforcement learning" "$gui"
fi
echo "man-pages: $(ls "$out" | wc -l) pages in $out" >&2
