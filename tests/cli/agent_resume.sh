#!/usr/bin/env bash
# `kwb agent --resume`: an episode that ends in an infrastructure error (the provider refuses the
# key mid-episode) exits non-zero; resumed with nothing but its id, it continues as a fork of its
# last step against the same server with the same model, task and device, and finishes. A
# finished episode, and one that does not exist, are refused with a clear message.
#   agent_resume.sh KWB PYTHON REPO
set -euo pipefail
kwb="$1"; python="$2"; repo="$3"
tmp="$(mktemp -d)"
trap 'kill "$server_pid" 2>/dev/null || true; rm -rf "$tmp"' EXIT

cat > "$tmp/script.json" <<'JSON'
{"turns": [
  {"text": "Let me read the skill file.",
   "tool_calls": [{"id": "call_1", "name": "Read", "arguments": {"file_path": "SKILL.md"}}]},
  {"text": "Now the candidate.",
   "tool_calls": [{"id": "call_2", "name": "Read", "arguments": {"file_path": "model_new.py"}}],
   "faults": [{"kind": "http_401"}]},
  {"text": "Nothing to change. Done."}]}
JSON
"$python" "$repo/tests/agent/scripted_llm_server.py" "$tmp/script.json" "$tmp/requests.log" > "$tmp/server.out" &
server_pid=$!
for _ in $(seq 50); do grep -q '^PORT ' "$tmp/server.out" 2>/dev/null && break; sleep 0.1; done
port="$(sed -n 's/^PORT //p' "$tmp/server.out")"
[ -n "$port" ] || { echo "scripted server did not start"; exit 1; }

status=0
OPENAI_API_KEY=sk-test-resume "$kwb" agent --task "$repo/resources/tasks/01_gelu.py" \
    --provider openai --base-url "http://127.0.0.1:$port/v1" --model scripted --max-turns 10 \
    --store "$tmp/store.db" --device cpu --python "$python" > "$tmp/first.out" 2>&1 || status=$?
[ "$status" -ne 0 ] || { cat "$tmp/first.out"; echo "FAIL: an infrastructure error exited 0"; exit 1; }
grep -q "^episode 1 infrastructure_error: provider error: auth" "$tmp/first.out" || { cat "$tmp/first.out"; echo "FAIL: episode 1 did not end as an infrastructure error"; exit 1; }

# Nothing but the id: task, model, provider, base URL, device and python come from the record.
OPENAI_API_KEY=sk-test-resume "$kwb" agent --resume 1 --store "$tmp/store.db" > "$tmp/resume.out" 2>&1 || { cat "$tmp/resume.out"; echo "FAIL: resume exited non-zero"; exit 1; }
grep -q "^resuming episode 1 from its step " "$tmp/resume.out" || { cat "$tmp/resume.out"; echo "FAIL: no resume line"; exit 1; }
grep -q "^episode 2 finished: the model stopped" "$tmp/resume.out" || { cat "$tmp/resume.out"; echo "FAIL: the resumed episode did not finish"; exit 1; }
"$kwb" episodes --store "$tmp/store.db" show 2 > "$tmp/show.out"
grep -q "fork of 1 at step" "$tmp/show.out" || { cat "$tmp/show.out"; echo "FAIL: episode 2 is not the continuation of 1"; exit 1; }
# The continuation sent the first turn's conversation again, not a fresh one.
[ "$(grep -c '"path": "/v1/chat/completions"' "$tmp/requests.log")" -eq 4 ] || { echo "FAIL: expected 4 model calls"; exit 1; }
tail -n 1 "$tmp/requests.log" | grep -q "call_2" || { echo "FAIL: the last request lacks the resumed conversation"; exit 1; }

if "$kwb" agent --resume 2 --store "$tmp/store.db" > "$tmp/again.out" 2>&1; then
    echo "FAIL: a finished episode was resumed"; exit 1
fi
grep -q "cannot resume: episode 2 finished (model_stopped): there is nothing to resume" "$tmp/again.out" || { cat "$tmp/again.out"; echo "FAIL: unclear refusal"; exit 1; }
if "$kwb" agent --resume 99 --store "$tmp/store.db" > "$tmp/missing.out" 2>&1; then
    echo "FAIL: a missing episode was resumed"; exit 1
fi
grep -q "cannot resume: " "$tmp/missing.out" || { cat "$tmp/missing.out"; echo "FAIL: unclear error for a missing episode"; exit 1; }
echo "PASS: an interrupted episode resumes from its record and finishes; finished and missing ones are refused"
