#!/usr/bin/env bash
# `kwb nvrtc` as a user runs it: device code through NVRTC with a resource table, a broken file
# with file:line:col diagnostics and exit code 1, a CUDA-Agent launcher file through nvcc, JSON,
# the syntax-only and timing modes, and exit code 2 for a missing file.
#   nvrtc_command.sh KWB PYTHON REPO
set -euo pipefail
kwb="$1"; python="$2"; repo="$3"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

mkdir -p "$tmp/ws/kernels"
cat > "$tmp/ws/kernels/tile.cu" <<'CU'
__global__ void __launch_bounds__(128) tile_kernel(float* out, const float* in) {
    __shared__ float tile[256];
    tile[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = tile[255 - threadIdx.x];
}
CU
"$kwb" nvrtc "$tmp/ws/kernels/tile.cu" --arch sm_90 > "$tmp/good.out" || fail "good kernel: exit $?"
cat "$tmp/good.out"
grep -q "tile.cu: nvrtc (device code only), sm_90, [0-9]* ms, compiled" "$tmp/good.out" || fail "summary line"
grep -Eq "^tile_kernel\(float\*, float const\*\) +[0-9]+ +1 +1K +226K +0 +0/0 +0 +128 \(lb\)" "$tmp/good.out" \
    || fail "resource table row"

printf '__global__ void k(float* x) {\n    x[0] = missing;\n}\n' > "$tmp/ws/kernels/broken.cu"
set +e
"$kwb" nvrtc "$tmp/ws/kernels/broken.cu" > "$tmp/broken.out"
code=$?
set -e
cat "$tmp/broken.out"
[ "$code" -eq 1 ] || fail "broken kernel exit code $code, expected 1"
grep -q "^$tmp/ws/kernels/broken.cu:2:12: error: identifier \"missing\" is undefined$" "$tmp/broken.out" \
    || fail "diagnostic line"

cp "$repo/tests/data/diagnostics/cuda_agent_layout/kernels/gelu.cu" "$tmp/ws/kernels/gelu.cu"
"$kwb" nvrtc "$tmp/ws/kernels/gelu.cu" --json > "$tmp/gelu.json" || fail "gelu: exit $?"
"$python" - "$tmp/gelu.json" <<'PY' || fail "gelu JSON"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["compile_path"] == "nvcc", r["compile_path"]
assert "'<<<' at line 63" in r["path_reason"], r["path_reason"]
assert r["success"] and r["errors"] == 0
names = sorted(k["name"] for k in r["kernels"])
assert len(names) == 2 and all("gelu_" in n for n in names), names
assert all(k["registers"] > 0 and k["max_threads_per_block"] > 0 for k in r["kernels"])
PY

"$kwb" nvrtc "$tmp/ws/kernels/tile.cu" --repeat 3 --burst 3 --burst-interval-ms 10 --debounce-ms 0 \
    --ptx --json > "$tmp/timing.json" || fail "timing modes: exit $?"
"$python" - "$tmp/timing.json" <<'PY' || fail "timing JSON"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["repeat"]["runs"] == 3 and r["repeat"]["p50_ms"] > 0, r["repeat"]
b = r["burst"]
# syntax-first: the last edit's diagnostics, then its full result; the earlier edits' dropped
assert b["submits"] == 3 and b["results_delivered"] == 2 and b["latest_success"], b
assert 0 < b["first_result_ms"] <= b["latest_result_ms"], b
assert ".entry _Z11tile_kernelPfPKf" in r["ptx"]
PY

"$kwb" nvrtc "$tmp/ws/kernels/broken.cu" --syntax-only --json > "$tmp/syntax.json" && fail "syntax-only: exit 0"
"$python" - "$tmp/syntax.json" <<'PY' || fail "syntax-only JSON"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["syntax_only"] and r["errors"] == 1 and r["kernels"] == [], r
assert r["diagnostics"][0]["line"] == 2 and r["diagnostics"][0]["column"] == 12, r["diagnostics"]
PY

set +e
"$kwb" nvrtc "$tmp/does-not-exist.cu" > /dev/null 2>&1
code=$?
set -e
[ "$code" -eq 2 ] || fail "missing file exit code $code, expected 2"
# Without NVRTC (a machine without the CUDA toolkit) the command says what is missing, and
# `kwb info` starts and says so too: NVRTC is dlopen'ed, not linked.
set +e
out=$(KWB_NVRTC_LIBRARY=/nonexistent/libnvrtc.so.13 "$kwb" nvrtc "$tmp/ws/kernels/tile.cu" 2>&1)
code=$?
set -e
[ "$code" -eq 1 ] || fail "without NVRTC: exit $code, expected 1"
grep -q "NVRTC not found (install the CUDA toolkit" <<<"$out" || fail "without NVRTC: $out"
KWB_NVRTC_LIBRARY=/nonexistent/libnvrtc.so.13 "$kwb" info | grep -q "NVRTC not found" ||
    fail "kwb info without NVRTC"

echo "PASS: kwb nvrtc diagnostics, resources, nvcc fallback, JSON, timing and exit codes"
