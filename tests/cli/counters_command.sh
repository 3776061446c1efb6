#!/usr/bin/env bash
# `kwb counters` as a user runs it on Nsight Compute output recorded on the H200
# (tests/data/ncu): the summary with roofline and advice, JSON, one kernel, two runs compared,
# and clear errors with exit code 1 for output that is not ncu's.
#   counters_command.sh KWB PYTHON REPO
set -euo pipefail
kwb="$1"; python="$2"; repo="$3"
data="$repo/tests/data/ncu"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$kwb" counters "$data/details.csv" --raw "$data/raw.csv" > "$tmp/all.out" || fail "summary: exit $?"
cat "$tmp/all.out"
[ "$(grep -c '^\[[0-9]\] ' "$tmp/all.out")" -eq 5 ] || fail "five kernels"
grep -q "^\[3\] sm80_xmma_gemm_f32f32.*grid (16, 32, 1) x block (256, 1, 1)$" "$tmp/all.out" || fail "matmul line"
grep -q "duration 3.50 ms, compute (SM) 87.77 %" "$tmp/all.out" || fail "matmul counters"
grep -q "346.75 flop/byte (ridge 10.5): under the compute roof, at 78% of its roof" "$tmp/all.out" \
    || fail "matmul roofline"
grep -q "3.37 flop/byte (ridge 10.2): under the memory roof, at 72% of its roof" "$tmp/all.out" \
    || fail "gelu roofline"
grep -q "OPT TheoreticalOccupancy (est. 87.5% local speed-up)" "$tmp/all.out" || fail "advice"

"$kwb" counters "$data/details.csv" --raw "$data/raw.csv" --kernel Gelu --json > "$tmp/gelu.json" \
    || fail "json: exit $?"
"$python" - "$tmp/gelu.json" <<'PY' || fail "gelu JSON"
import json, sys
kernels = json.load(open(sys.argv[1]))["kernels"]
assert len(kernels) == 1, kernels
k = kernels[0]
assert k["id"] == 2 and "Gelu" in k["kernel"], k["kernel"]
duration = [m for m in k["metrics"] if m["name"] == "Duration"][0]
assert duration["unit"] == "us" and abs(duration["base"]["value"] - 31.81e-6) < 1e-12, duration
fp32 = k["roofline"][0]
assert fp32["precision"] == "FP32" and fp32["memory_bound"] is True, fp32
assert abs(fp32["intensity"] - 3.3676) < 1e-3, fp32
PY

# Two runs: the same kernels printed with scaled and with base units differ by rounding only,
# so nothing is listed as changed; an edited duration is.
"$kwb" counters "$data/details.csv" --compare "$data/details-base.csv" > "$tmp/same.out" \
    || fail "compare: exit $?"
cat "$tmp/same.out"
[ "$(grep -c '^  ' "$tmp/same.out")" -eq 0 ] || fail "rounding listed as a change"
sed 's/"Duration","ms","3.50"/"Duration","ms","7.00"/' "$data/details.csv" > "$tmp/slower.csv"
"$kwb" counters "$data/details.csv" --compare "$tmp/slower.csv" --json > "$tmp/slower.json"
"$python" - "$tmp/slower.json" <<'PY' || fail "comparison JSON"
import json, sys
rows = json.load(open(sys.argv[1]))["comparison"]
gemm = [r for r in rows if "gemm" in r["kernel"]][0]
d = [c for c in gemm["changes"] if c["name"] == "Duration"][0]
assert d["unit"] == "s" and abs(d["ratio"] - 2.0) < 1e-9, d
PY

# Not ncu output, the wrong page, no such kernel: a reason and exit code 1.
expect_failure() {
    local what="$1" pattern="$2"; shift 2
    set +e
    "$kwb" counters "$@" > "$tmp/err.out" 2>&1
    local code=$?
    set -e
    cat "$tmp/err.out"
    [ "$code" -eq 1 ] || fail "$what: exit code $code, expected 1"
    grep -q "$pattern" "$tmp/err.out" || fail "$what: message"
}
echo "just some text" > "$tmp/notes.txt"
expect_failure "plain text" "not \`ncu --csv\` output" "$tmp/notes.txt"
expect_failure "raw page as details" "not the details page" "$data/raw.csv"
expect_failure "details as raw" "not the raw page" "$data/details.csv" --raw "$data/details.csv"
expect_failure "no such kernel" "no kernel's name contains 'nothing'" "$data/details.csv" --kernel nothing
echo "PASS"
