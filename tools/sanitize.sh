#!/usr/bin/env bash
# The sanitizer and fuzzing job (CI runs it before the main test suite): builds the `fuzz` preset
# (clang, libFuzzer, AddressSanitizer + UBSan, Qt-free), runs the engine and agent unit tests
# under the sanitizers, replays every fuzz target's corpus (ctest label `sanitize`), then
# fuzzes each target for KWB_FUZZ_SECONDS (default 30). A finding fails the job; libFuzzer leaves
# the input as build/fuzz/tests/fuzz/crash-*: add it to tests/fuzz/corpus/<target>/.
#
#   tools/sanitize.sh [ctest arguments...]
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${KWB_FUZZ_SECONDS:-30}"

cmake --preset fuzz -S "$repo" -DKWB_FUZZ_SECONDS="$seconds" >/dev/null
targets=(kwb_engine_tests kwb_diagnostics_tests kwb_agent_tests kwb_timeline_tests)
for source in "$repo"/tests/fuzz/fuzz_*.cpp; do
    name="$(basename "$source" .cpp)"
    targets+=("kwb_${name}")
done
cmake --build "$repo/build/fuzz" --target "${targets[@]}"
cd "$repo/build/fuzz"
# Leaks are reported at exit of every test process; the third-party libraries' own one-time
# allocations (NVRTC, libcurl, SQLite) are not ours, so only kwb's frames fail a test.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$repo/tests/fuzz/lsan.supp:print_suppressions=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export KWB_RESOURCES="$repo/resources"
# The unit-level engine and agent suites, each executable whole (the end-to-end evaluation
# suites run in the release build), two at a time.
failed=0
printf '%s\n' "${targets[@]:0:4}" |
    xargs -P "$(nproc)" -I{} sh -c 'leaks=1
        # The timeline suite loads and unloads the CUPTI injection library: libstdc++'"'"'s
        # exception pool in that unloaded copy reports as a leak of an unknown module.
        [ {} = kwb_timeline_tests ] && leaks=0
        ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=$leaks" ./tests/{} --gtest_brief=1 > "{}.log" 2>&1 ||
            { echo "FAILED: {}"; exit 1; }' ||
    failed=1
for suite in "${targets[@]:0:4}"; do
    tail -n 3 "$suite.log" | sed "s/^/$suite: /"
done
if [ "$failed" -ne 0 ]; then
    for suite in "${targets[@]:0:4}"; do
        grep -q 'FAILED\|ERROR: AddressSanitizer\|runtime error' "$suite.log" && cat "$suite.log"
    done
    exit 1
fi
# Every fuzz target's corpus replayed under the sanitizers, then fuzzed.
ctest --output-on-failure --timeout 900 -j "$(nproc)" -L 'sanitize|fuzz' "$@"
