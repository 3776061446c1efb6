#!/usr/bin/env bash
# `kwb timeline` through `kwb serve` on a GPU (exit 77 without one): the daemon records the
# profile stage under CUPTI as `kwb eval` runs it there, and the client writes the trace from the
# records the daemon names; --serve off records in the calling process as before.
#   timeline_serve.sh KWB PYTHON REPO
set -euo pipefail
kwb="$1"; python="$2"; repo="$3"
if ! nvidia-smi -L 2>/dev/null | grep -q GPU; then
    echo "SKIP: no GPU"; exit 77
fi
tmp="$(mktemp -d)"
export XDG_RUNTIME_DIR="$tmp/runtime"
mkdir -m 700 "$XDG_RUNTIME_DIR"
export KWB_CACHE_DIR="$tmp/cache"
trap '"$kwb" serve stop >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
# The fast-path layout: NVRTC compiles in the evaluator, no extension build to wait for.
"$kwb" workspace init --fast "$repo/resources/tasks/01_gelu.py" "$tmp/ws" --with-solution >/dev/null
"$kwb" timeline "$tmp/ws" --out "$tmp/served.json" --iterations 5 --json-summary --serve on \
    >"$tmp/served-summary.json" 2>"$tmp/served.err" || { cat "$tmp/served.err" "$tmp/served-summary.json"; echo "FAIL: through the daemon"; exit 1; }
"$kwb" serve status --json >"$tmp/status.json"
"$kwb" timeline "$tmp/ws" --out "$tmp/local.json" --iterations 5 --json-summary --serve off \
    >"$tmp/local-summary.json" 2>"$tmp/local.err" || { cat "$tmp/local.err" "$tmp/local-summary.json"; echo "FAIL: in this process"; exit 1; }
"$python" - "$tmp" <<'PY'
import json, os, sys
tmp = sys.argv[1]
status = json.load(open(f"{tmp}/status.json"))["status"]
assert status["requests_served"] >= 1, status
for name in ("served", "local"):
    summary = json.load(open(f"{tmp}/{name}-summary.json"))
    assert summary["kernel_count"] > 0, (name, summary)
    assert summary["complete"] is True, (name, summary)
    assert summary["dropped"]["total"] == 0, (name, summary)
    assert os.path.isfile(summary["records"]), (name, summary["records"])
    assert summary["records"].startswith(f"{tmp}/ws/"), (name, summary["records"])
    trace = json.load(open(f"{tmp}/{name}.json"))
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    assert any(e.get("ph") == "X" for e in events), (name, len(events))
print("ok: a timeline through the daemon (requests served:", status["requests_served"], ") and in this process")
PY
