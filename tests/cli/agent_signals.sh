#!/usr/bin/env bash
# `kwb agent` stopped by SIGTERM (a service manager, a scheduler, `kill`) mid-turn ends as Ctrl+C
# does: the episode is stored as stopped, not left running for the next start to find abandoned,
# and `--resume` continues it to the end. Then Ctrl+C (SIGINT) while the final evaluation runs: the
# evaluation is cancelled at once and the episode stored as stopped in its final evaluation, with
# no reward (not a -1 a trainer would learn from).
#   agent_signals.sh KWB PYTHON REPO
set -euo pipefail
kwb="$1"; python="$2"; repo="$3"
tmp="$(mktemp -d)"
trap 'kill "$server_pid" 2>/dev/null || true; rm -rf "$tmp"' EXIT

# The first reply streams one token every 0.4 s: long enough to be interrupted.
cat > "$tmp/script.json" <<'JSON'
{"turns": [
  {"text": "Let me think about this kernel for a while before I read anything at all here.",
   "tool_calls": [{"id": "call_1", "name": "Read", "arguments": {"file_path": "SKILL.md"}}],
   "faults": [{"kind": "slow_tokens", "delay": 0.4}]},
  {"text": "Let me read the skill file.",
   "tool_calls": [{"id": "call_2", "name": "Read", "arguments": {"file_path": "SKILL.md"}}]},
  {"text": "Nothing to change. Done."}]}
JSON
"$python" "$repo/tests/agent/scripted_llm_server.py" "$tmp/script.json" "$tmp/requests.log" > "$tmp/server.out" 2> "$tmp/server.err" &
server_pid=$!
for _ in $(seq 50); do grep -q '^PORT ' "$tmp/server.out" 2>/dev/null && break; sleep 0.1; done
port="$(sed -n 's/^PORT //p' "$tmp/server.out")"
[ -n "$port" ] || { echo "scripted server did not start"; exit 1; }

OPENAI_API_KEY=sk-test-signals "$kwb" agent --task "$repo/resources/tasks/01_gelu.py" \
    --provider openai --base-url "http://127.0.0.1:$port/v1" --model scripted --max-turns 10 \
    --store "$tmp/store.db" --device cpu --python "$python" > "$tmp/first.out" 2>&1 &
agent_pid=$!
for _ in $(seq 300); do [ -s "$tmp/requests.log" ] && break; sleep 0.1; done
[ -s "$tmp/requests.log" ] || { cat "$tmp/first.out"; echo "FAIL: the agent never asked the model"; exit 1; }
sleep 1
kill -TERM "$agent_pid"
status=0
wait "$agent_pid" || status=$?
grep -q "^episode 1 stopped" "$tmp/first.out" || { cat "$tmp/first.out"; echo "FAIL: SIGTERM did not store the episode as stopped (exit $status)"; exit 1; }
"$kwb" episodes --store "$tmp/store.db" list > "$tmp/list.out"
if grep -q "running" "$tmp/list.out"; then cat "$tmp/list.out"; echo "FAIL: a row was left running"; exit 1; fi

OPENAI_API_KEY=sk-test-signals "$kwb" agent --resume 1 --store "$tmp/store.db" > "$tmp/resume.out" 2>&1 || { cat "$tmp/resume.out"; echo "FAIL: resume exited non-zero"; exit 1; }
grep -q "^episode 2 finished: the model stopped" "$tmp/resume.out" || { cat "$tmp/resume.out"; echo "FAIL: the resumed episode did not finish"; exit 1; }
kill "$server_pid"; wait "$server_pid" 2>/dev/null || true

# The model writes a candidate whose forward sleeps two minutes, then stops: the final evaluation
# is still in its stages when Ctrl+C comes.
"$python" - > "$tmp/script2.json" <<'PY'
import json
slow = "\n".join(["import time", "import torch", "import torch.nn as nn", "",
                  "class ModelNew(nn.Module):", "    def __init__(self):", "        super().__init__()", "",
                  "    def forward(self, x):", "        time.sleep(120)", "        return x", ""])
print(json.dumps({"turns": [
    {"text": "Writing it.", "tool_calls": [{"id": "w1", "name": "Write",
                                            "arguments": {"file_path": "model_new.py", "content": slow}}]},
    {"text": "Done."}]}))
PY
: > "$tmp/requests.log"
"$python" "$repo/tests/agent/scripted_llm_server.py" "$tmp/script2.json" "$tmp/requests.log" > "$tmp/server.out" 2> "$tmp/server.err" &
server_pid=$!
for _ in $(seq 50); do grep -q '^PORT ' "$tmp/server.out" 2>/dev/null && break; sleep 0.1; done
port="$(sed -n 's/^PORT //p' "$tmp/server.out")"
OPENAI_API_KEY=sk-test-signals "$kwb" agent --task "$repo/resources/tasks/01_gelu.py" \
    --provider openai --base-url "http://127.0.0.1:$port/v1" --model scripted --max-turns 10 \
    --store "$tmp/store.db" --device cpu --python "$python" > "$tmp/final.out" 2>&1 &
agent_pid=$!
for _ in $(seq 300); do [ "$(wc -l < "$tmp/requests.log")" -ge 2 ] && break; sleep 0.1; done
[ "$(wc -l < "$tmp/requests.log")" -ge 2 ] || { cat "$tmp/final.out"; echo "FAIL: the agent never asked for its last turn"; exit 1; }
sleep 3 # the reply ends at once; the final evaluation is in its stages now
started=$SECONDS
kill -INT "$agent_pid"
final_status=0
wait "$agent_pid" || final_status=$?
[ $((SECONDS - started)) -lt 60 ] || { cat "$tmp/final.out"; echo "FAIL: Ctrl+C waited for the final evaluation"; exit 1; }
[ "$final_status" = 0 ] || { cat "$tmp/final.out"; echo "FAIL: a stopped episode exited $final_status"; exit 1; }
grep -q "^episode 3 stopped: stopped during the final evaluation" "$tmp/final.out" \
    || { cat "$tmp/final.out"; echo "FAIL: Ctrl+C in the final evaluation was not stored as such"; exit 1; }
"$python" - "$tmp/store.db" <<'PY' || { echo "FAIL: the stored episode"; exit 1; }
import sqlite3, sys
row = sqlite3.connect(sys.argv[1]).execute("SELECT status, end_cause, reward FROM episodes WHERE id = 3").fetchone()
assert row == ("stopped", "stopped_in_final_evaluation", None), row
PY
echo "PASS: SIGTERM stops an episode as Ctrl+C does (exit $status), and it resumes to the end; Ctrl+C in the final evaluation stops it without a reward"
