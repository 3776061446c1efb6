#!/usr/bin/env bash
# `kwb agent` end to end against the scripted LLM server: the scripted agent writes the CUDA-Agent
# kernel files for task 07 (with their CPU launcher), compiles, verifies and stops; the episode
# must finish with the evaluator's reward (>= 1 in CPU mode), be listed, shown and exported, and
# the API key must not appear in the store or the export. KWB_AGENT_DEVICE=cuda runs it on a GPU.
#   agent_episode.sh KWB PYTHON REPO
set -euo pipefail
kwb="$1"; python="$2"; repo="$3"
tmp="$(mktemp -d)"
trap 'kill "$server_pid" 2>/dev/null || true; rm -rf "$tmp"' EXIT
key="sk-test-$RANDOM$RANDOM-secret"
# Another credential the process can see, not the provider's: it must be redacted as well.
aws="aws-test-$RANDOM$RANDOM-credential"
solution="$repo/resources/solutions/07_scale_residual_add"

"$python" - "$solution" "$key" "$aws" > "$tmp/script.json" <<'PY'
import json, os, sys
solution, key, aws = sys.argv[1:4]
def write(path):
    with open(os.path.join(solution, path)) as f:
        return {"name": "Write", "arguments": {"file_path": path, "content": f.read()}}
files = ["kernels/scale_residual.cu", "kernels/scale_residual_binding.cpp",
         "kernels/scale_residual_cpu.cpp", "model_new.py"]
turns = [{"text": "I will write the fused kernel.",
          "tool_calls": [dict(id=f"call_{i}", **write(p)) for i, p in enumerate(files)]},
         {"text": "Now compile and verify.", "tool_calls": [{"id": "call_v", "name": "Verify", "arguments": {}}],
          "faults": [{"kind": "http_500", "status": 503}]},
         # A server (or model) that echoes credentials, streamed in small pieces.
         # ... and terminal control sequences (colour, window title, bell), shown escaped.
         {"text": f"The kernel is correct. Done. (Echo: {key} and {aws}.) \x1b[31mred\x1b]0;title\x07"}]
print(json.dumps({"turns": turns}))
PY

"$python" "$repo/tests/agent/scripted_llm_server.py" "$tmp/script.json" "$tmp/requests.log" > "$tmp/server.out" &
server_pid=$!
for _ in $(seq 50); do grep -q '^PORT ' "$tmp/server.out" 2>/dev/null && break; sleep 0.1; done
port="$(sed -n 's/^PORT //p' "$tmp/server.out")"
[ -n "$port" ] || { echo "scripted server did not start"; exit 1; }

OPENAI_API_KEY="$key" AWS_SECRET_ACCESS_KEY="$aws" "$kwb" agent --task "$repo/resources/tasks/07_scale_residual_add.py" \
    --provider openai --base-url "http://user:$aws@127.0.0.1:$port/v1" --model scripted --max-turns 10 \
    --workspace "$tmp/ws" --store "$tmp/store.db" --device "${KWB_AGENT_DEVICE:-cpu}" --python "$python" | tee "$tmp/agent.out"

grep -q "tool_call *Write" "$tmp/agent.out" || { echo "FAIL: no Write step shown"; exit 1; }
grep -q "evaluation" "$tmp/agent.out" || { echo "FAIL: no evaluation step shown"; exit 1; }
grep -Eq "^episode 1 finished: .*reward [123]$" "$tmp/agent.out" || { echo "FAIL: episode did not finish with reward >= 1"; exit 1; }
cmp -s "$solution/model_new.py" "$tmp/ws/model_new.py" || { echo "FAIL: the agent's file was not written"; exit 1; }
grep -q '"fault": "http_500"' "$tmp/requests.log" || { echo "FAIL: the fault was not served"; exit 1; }

"$kwb" episodes --store "$tmp/store.db" list | tee "$tmp/list.out"
grep -Eq "^1	finished	[123]	" "$tmp/list.out" || { echo "FAIL: episodes list"; exit 1; }
"$kwb" episodes --store "$tmp/store.db" show 1 > "$tmp/show.out"
grep -q "tool_result" "$tmp/show.out" || { echo "FAIL: episodes show"; exit 1; }
"$kwb" episodes --store "$tmp/store.db" export 1 --out "$tmp/export.jsonl"
[ "$(wc -l < "$tmp/export.jsonl")" -eq 1 ] || { echo "FAIL: export"; exit 1; }
"$kwb" episodes --store "$tmp/store.db" import "$tmp/export.jsonl" | grep -q "imported episode 2" || { echo "FAIL: import"; exit 1; }
# The rollout metrics over the store: the episode and its imported copy, both passing.
"$kwb" episodes --store "$tmp/store.db" metrics --json > "$tmp/metrics.json"
"$python" - "$tmp/metrics.json" <<'PY' || { cat "$tmp/metrics.json"; echo "FAIL: episodes metrics"; exit 1; }
import json, sys
overall = json.load(open(sys.argv[1]))["overall"]
assert overall["episodes"] == 2 and overall["scored"] == 2, overall
assert overall["pass_rate"] == 1.0 and overall["mean_reward"] >= 1, overall
assert sum(overall["reward_counts"].values()) == 2 and overall["hack_flag_rate"] == 0.0, overall
assert overall["gpu_seconds_per_evaluation"] is None, overall  # CPU mode
PY
"$kwb" episodes --store "$tmp/store.db" metrics --task-prefix /nonexistent | grep -q "^all	0	0	" || { echo "FAIL: metrics filter"; exit 1; }
grep -q "Bearer $key" "$tmp/requests.log" || { echo "FAIL: the key was not sent to the server"; exit 1; }
if grep -rq -e "$key" -e "$aws" "$tmp/store.db"* "$tmp/export.jsonl" "$tmp/agent.out"; then
    echo "FAIL: a credential leaked into the store, the export or the live output"; exit 1
fi
grep -q "Echo: \[redacted\] and \[redacted\]" "$tmp/agent.out" || { echo "FAIL: the echo was not shown redacted"; exit 1; }
# The base URL carried a credential (user:KEY@): its description shows it masked.
grep -q "^provider openai-compatible http://\[redacted\]@127.0.0.1" "$tmp/agent.out" || { echo "FAIL: the base URL was not shown masked"; exit 1; }
# No raw ESC or BEL reaches the terminal, live or from `episodes show`; the escapes are visible.
if LC_ALL=C grep -q $'[\x1b\x07]' "$tmp/agent.out" "$tmp/show.out"; then
    echo "FAIL: raw control characters were printed"; exit 1
fi
grep -qF '\x1b[31mred\x1b]0;title\x07' "$tmp/agent.out" || { echo "FAIL: the control characters were not shown escaped"; exit 1; }
echo "PASS: scripted episode stored with its reward; list, show, export, import and metrics work; no credential leaked"
