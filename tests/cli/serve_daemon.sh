#!/usr/bin/env bash
# `kwb serve` as a user meets it: `kwb eval` starts the daemon on demand and goes through it (the
# record's stages, the daemon's "service" share among them, add up to the wall time), `kwb serve
# status` and `stop`, --serve off, and a runtime folder open to others (auto falls back to this
# process, on fails).
#   serve_daemon.sh KWB PYTHON DATA_DIR
set -eu
kwb="$1"
python="$2"
data="$3"
out=$(mktemp -d)
export XDG_RUNTIME_DIR="$out/runtime"
mkdir -m 700 "$XDG_RUNTIME_DIR"
export KWB_SERVE=on
trap '"$kwb" serve stop >/dev/null 2>&1 || true; rm -rf "$out"' EXIT
pair=("$data/reference.py" --candidate "$data/candidate.py" --device cpu --checks 2 --iterations 2 --json)

"$kwb" eval "${pair[@]}" >"$out/first.json"
"$kwb" serve status --json >"$out/status.json"
"$kwb" eval "${pair[@]}" --no-profile >"$out/second.json"
"$kwb" eval "${pair[@]}" --no-profile --serve off >"$out/local.json"
"$python" - "$out" <<'PY'
import json, sys
out = sys.argv[1]
first, second, local = (json.load(open(f"{out}/{name}.json")) for name in ("first", "second", "local"))
status = json.load(open(f"{out}/status.json"))["status"]
assert first["correct"] is True, first["failure"]
names = [s["name"] for s in first["stages"]]
assert names[:2] == ["service", "queue"], names
assert "started for this call" in first["stages"][0]["summary"], first["stages"][0]
assert "already running" in second["stages"][0]["summary"], second["stages"][0]
assert "service" not in [s["name"] for s in local["stages"]], local["stages"]
for record in (first, second):
    stages = sum(s["seconds"] for s in record["stages"])
    assert 0.95 * record["total_seconds"] <= stages <= record["total_seconds"] + 1e-6, (stages, record["total_seconds"])
assert status["requests_served"] >= 2 and status["pid"] > 0, status
print("ok: through the daemon (pid", status["pid"], "), stages cover the wall time; --serve off stays local")
PY
pid=$("$python" -c 'import json,sys; print(json.load(open(sys.argv[1]))["status"]["pid"])' "$out/status.json")
"$kwb" serve stop
for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$pid" 2>/dev/null; then echo "FAIL: the daemon $pid did not stop"; exit 1; fi

# A runtime folder others can write: no daemon there; auto evaluates here, on refuses.
chmod 777 "$XDG_RUNTIME_DIR/kernel-workbench"
KWB_SERVE=auto "$kwb" eval "${pair[@]}" --no-profile >"$out/fallback.json" 2>"$out/fallback.err"
grep -q "evaluating in this process" "$out/fallback.err" || { cat "$out/fallback.err"; echo "FAIL: no fallback note"; exit 1; }
if "$kwb" eval "${pair[@]}" --no-profile >/dev/null 2>"$out/on.err"; then echo "FAIL: --serve on ran without a daemon"; exit 1; fi
grep -q "open to other users" "$out/on.err" || { cat "$out/on.err"; echo "FAIL: no reason given"; exit 1; }
chmod 700 "$XDG_RUNTIME_DIR/kernel-workbench"
echo "ok: stop, fallback and refusal"
