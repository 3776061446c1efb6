#!/usr/bin/env bash
# `kwb rollout` at the issue's scale on the CPU: 20 tasks x 2 episodes at concurrency 4 against
# the scripted LLM server, every episode evaluated through the shared evaluation service. Each
# (task, sample) ends with exactly one settled episode, nothing is left running, the store is
# intact, and the run's metrics count all 40.
#   rollout_scale.sh KWB PYTHON REPO
set -euo pipefail
kwb="$1"; python="$2"; repo="$3"
tmp="$(mktemp -d)"
trap 'kill "$server_pid" 2>/dev/null || true; rm -rf "$tmp"' EXIT
mkdir -p "$tmp/tasks"
for i in $(seq 1 20); do
    cat > "$tmp/tasks/task_$i.py" <<PY
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.tanh(x * $i.0) + $i.0


def get_inputs():
    return [torch.randn(16, $((i * 8)))]


def get_init_inputs():
    return []
PY
done
"$python" - > "$tmp/script.json" <<'PY'
import json
print(json.dumps({"turns": [{"text": "Nothing to change. Done."}] * 60}))
PY
"$python" "$repo/tests/agent/scripted_llm_server.py" "$tmp/script.json" "$tmp/requests.log" > "$tmp/server.out" &
server_pid=$!
for _ in $(seq 50); do grep -q '^PORT ' "$tmp/server.out" 2>/dev/null && break; sleep 0.1; done
port="$(sed -n 's/^PORT //p' "$tmp/server.out")"
[ -n "$port" ] || { echo "scripted server did not start"; exit 1; }
started=$(date +%s)
OPENAI_API_KEY=sk-test-rollout "$kwb" rollout --tasks "$tmp/tasks" --episodes-per-task 2 --concurrency 4 \
    --provider openai --base-url "http://127.0.0.1:$port/v1" --model scripted --max-turns 3 \
    --device cpu --python "$python" --store "$tmp/store.db" --json > "$tmp/run.json" 2> "$tmp/run.err" \
    || { tail -20 "$tmp/run.err"; cat "$tmp/run.json"; echo "FAIL: rollout exited non-zero"; exit 1; }
echo "20 tasks x 2 episodes at concurrency 4: $(($(date +%s) - started)) s"
"$kwb" runs --store "$tmp/store.db" metrics 1 --json > "$tmp/metrics.json"
"$python" - "$tmp/run.json" "$tmp/metrics.json" "$tmp/store.db" <<'PY' || { tail -20 "$tmp/run.err"; echo "FAIL: rollout at scale"; exit 1; }
import json, sqlite3, sys
out = json.load(open(sys.argv[1]))
assert out["status"] == "finished" and out["planned"] == 40 and out["done"] == 40, out
overall = json.load(open(sys.argv[2]))["overall"]
assert overall["scored"] == 40 and sum(overall["reward_counts"].values()) == 40, overall
db = sqlite3.connect(sys.argv[3])
rows = db.execute("SELECT json_extract(settings, '$.run_task'), json_extract(settings, '$.run_sample'), count(*) "
                  "FROM episodes WHERE status IN ('finished', 'failed') GROUP BY 1, 2").fetchall()
assert len(rows) == 40 and all(count == 1 for _, _, count in rows), rows
assert db.execute("SELECT count(*) FROM episodes WHERE status = 'running'").fetchone()[0] == 0
assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
# Every episode was judged: a final evaluation with a reward in every record.
rewards = [r for (r,) in db.execute("SELECT reward FROM episodes WHERE status IN ('finished', 'failed')")]
assert len(rewards) == 40 and all(r is not None for r in rewards), rewards
PY
echo "PASS: 40 episodes over 20 tasks at concurrency 4, each settled once"
