#!/usr/bin/env bash
# The long soak (issue 15, part 7): the CI's soak test (tests/soak) with 500 Verify calls
# instead of 30. Agent episodes run through the real engine with the warm worker while the
# scripted LLM server cuts streams and fails requests, some candidates hang past the stage
# timeout or crash, and harness processes are SIGKILLed every few seconds. It passes when every
# episode, tool call and evaluation is in the store exactly once, PRAGMA integrity_check is ok,
# nothing is left running and the next evaluation is fine; it prints what happened.
#
#   bench/soak.sh [evaluations] [seed]      (after the README's build; CPU only)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tests="$repo/build/release/tests/kwb_soak_tests"
[ -x "$tests" ] || { echo "build first: cmake --build build/release --target kwb_soak_tests" >&2; exit 2; }
evaluations="${1:-500}"
seed="${2:-1}"
log="$(mktemp /tmp/kwb-soak.XXXXXX.log)"
start=$SECONDS
set +e
KWB_RESOURCES="$repo/resources" KWB_SOAK_EVALUATIONS="$evaluations" KWB_SOAK_SEED="$seed" \
    "$tests" > "$log" 2>&1
status=$?
set -e
grep -E '^soak:|Failure|^\[  (PASSED|FAILED)' "$log" || true
echo "soak: exit ${status} after $((SECONDS - start)) s on $(nproc) cores, $(date -u +%FT%TZ); full log: $log"
exit "$status"
