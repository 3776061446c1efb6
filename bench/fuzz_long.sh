#!/usr/bin/env bash
# Longer fuzzing than CI's bounded run (issue 15, part 6): every libFuzzer target for SECONDS
# with SEED (0: a fresh random seed), from the checked-in corpus, under ASan + UBSan. Prints a
# Markdown table of executions, coverage and findings per target; a finding's input is left in
# build/fuzz/tests/fuzz/long-<target>-crash-* (add it to tests/fuzz/corpus/<target>/).
#
#   bench/fuzz_long.sh [seconds per target, default 300] [seed, default 0]
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-300}"
seed="${2:-0}"
cmake --preset fuzz -S "$repo" >/dev/null
targets=()
for source in "$repo"/tests/fuzz/fuzz_*.cpp; do
    targets+=("$(basename "$source" .cpp)")
done
cmake --build "$repo/build/fuzz" --target "${targets[@]/#/kwb_}" >/dev/null
out="$repo/build/fuzz/tests/fuzz"
export KWB_RESOURCES="$repo/resources"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$repo/tests/fuzz/lsan.supp:print_suppressions=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
echo "| target | seconds | executions | exec/s | coverage (edges) | corpus | findings |"
echo "|---|---|---|---|---|---|---|"
status=0
for target in "${targets[@]}"; do
    name="${target#fuzz_}"
    work="$(mktemp -d)"
    log="$out/long-$name.log"
    set +e
    "$out/kwb_$target" -seed="$seed" -max_total_time="$seconds" -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$out/long-$name-" "$work" \
        "$repo/tests/fuzz/corpus/$name" > "$log" 2>&1
    rc=$?
    set -e
    runs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo ?)"
    rate="$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo ?)"
    cov="$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo ?)"
    corpus="$(find "$work" -type f | wc -l)"
    finding="none"
    if [ "$rc" -ne 0 ]; then
        finding="$(grep -m1 -o 'ERROR: [A-Za-z]*: [a-z -]*\|SUMMARY: [^\n]*' "$log" | head -1) (log: $log)"
        status=1
    fi
    echo "| $name | $seconds | $runs | $rate | $cov | $corpus | $finding |"
    rm -rf "$work"
done
echo
echo "seed $seed; $(clang --version | head -1); $(date -u +%FT%TZ); $(nproc) cores"
exit "$status"
