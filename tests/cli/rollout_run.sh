#!/usr/bin/env bash
# `kwb rollout` end to end against the scripted LLM server, CPU mode: 3 tasks x 2 episodes at
# concurrency 2 complete, an episode that hit an infrastructure error is run again and stays
# outside the scored metrics (its turns, tokens and cost count as spent); `kwb runs list` and `kwb runs metrics` report the run. Then a second run
# is killed with SIGKILL after its first settled episode and resumed: every (task, sample) ends
# with exactly one settled episode, none lost, none twice.
#   rollout_run.sh KWB PYTHON REPO
set -euo pipefail
kwb="$1"; python="$2"; repo="$3"
tmp="$(mktemp -d)"
trap 'kill "$server_pid" 2>/dev/null || true; kill -9 "$rollout_pid" 2>/dev/null || true; rm -rf "$tmp"' EXIT
rollout_pid=""
mkdir -p "$tmp/tasks"
for t in 01_gelu 02_sum_reduction 07_scale_residual_add; do cp "$repo/resources/tasks/$t.py" "$tmp/tasks/"; done

start_server() {  # script file; sets port and server_pid
    "$python" "$repo/tests/agent/scripted_llm_server.py" "$1" "$tmp/requests.log" > "$tmp/server.out" &
    server_pid=$!
    for _ in $(seq 50); do grep -q '^PORT ' "$tmp/server.out" 2>/dev/null && break; sleep 0.1; done
    port="$(sed -n 's/^PORT //p' "$tmp/server.out")"
    [ -n "$port" ] || { echo "scripted server did not start"; exit 1; }
}

"$python" - > "$tmp/script1.json" <<'PY'
import json
done = {"text": "Nothing to change. Done."}
print(json.dumps({"turns": [dict(done, faults=[{"kind": "http_401"}])] + [done] * 5}))
PY
start_server "$tmp/script1.json"
OPENAI_API_KEY=sk-test-rollout "$kwb" rollout --tasks "$tmp/tasks" --episodes-per-task 2 --concurrency 2 \
    --provider openai --base-url "http://127.0.0.1:$port/v1" --model scripted --max-turns 5 \
    --device cpu --python "$python" --store "$tmp/store.db" --token-ids --json > "$tmp/run1.json" 2> "$tmp/run1.err" \
    || { cat "$tmp/run1.err" "$tmp/run1.json"; echo "FAIL: rollout exited non-zero"; exit 1; }
"$python" - "$tmp/run1.json" <<'PY' || { cat "$tmp/run1.json"; echo "FAIL: rollout outcome"; exit 1; }
import json, sys
out = json.load(open(sys.argv[1]))
assert out == {"run": 1, "status": "finished", "planned": 6, "done": 6, "gave_up": 0, "skipped": 0,
               "skipped_tasks": [], "error": ""}, out
PY
grep -q "run 1: 6/6 done" "$tmp/run1.err" || { cat "$tmp/run1.err"; echo "FAIL: no live progress"; exit 1; }
"$kwb" runs --store "$tmp/store.db" list | grep -q "^1	finished	scripted	2 per task	" || { echo "FAIL: runs list"; exit 1; }
"$kwb" runs --store "$tmp/store.db" metrics 1 --json > "$tmp/metrics1.json"
"$python" - "$tmp/metrics1.json" <<'PY' || { cat "$tmp/metrics1.json"; echo "FAIL: run metrics"; exit 1; }
import json, sys
overall = json.load(open(sys.argv[1]))["overall"]
# 6 settled episodes, plus the one the 401 ended (an infrastructure error, run again).
assert overall["episodes"] == 7 and overall["scored"] == 6, overall
assert overall["infrastructure_errors"] == 1, overall
assert sum(overall["reward_counts"].values()) == 6, overall
PY
"$kwb" runs --store "$tmp/store.db" metrics 1 | grep -q "^all	7	6	" || { echo "FAIL: metrics table"; exit 1; }
# The same metrics computed by hand from the store's rows, with the paper's definitions: rates
# over scored episodes (finished), speed-ups from the passing ones' final evaluations.
"$python" - "$tmp/store.db" "$tmp/metrics1.json" <<'PY' || { cat "$tmp/metrics1.json"; echo "FAIL: metrics against the hand count"; exit 1; }
import collections, json, math, sqlite3, sys
rows = sqlite3.connect(sys.argv[1]).execute(
    "SELECT status, reward, final_evaluation, turns FROM episodes "
    "WHERE json_extract(settings, '$.run_id') = 1").fetchall()
overall = json.load(open(sys.argv[2]))["overall"]
scored = [r for r in rows if r[0] == "finished"]
rewards = [r[1] if r[1] is not None else -1.0 for r in scored]
def speedup(row, key):
    value = (json.loads(row[2] or "null") or {}).get("speedup", {}).get(key)
    return value if isinstance(value, (int, float)) and value > 0 else None
passing = [r for r, reward in zip(scored, rewards) if reward >= 1]
eager = [v for v in (speedup(r, "vs_eager") for r in passing) if v is not None]
compiled = [v for v in (speedup(r, "vs_compile") for r in passing) if v is not None]
def close(a, b):
    return (a is None and b is None) or (a is not None and b is not None and abs(a - b) < 1e-9)
expected = {
    "episodes": len(rows), "scored": len(scored),
    "pass_rate": len(passing) / len(scored),
    "faster_than_eager_rate": sum(v > 1 for v in eager) / len(scored),
    "faster_than_compile_rate": sum(v > 1 for v in compiled) / len(scored),
    "mean_reward": sum(rewards) / len(scored),
    "mean_turns": sum(r[3] for r in rows) / len(rows),
    "geomean_speedup_vs_eager": math.exp(sum(map(math.log, eager)) / len(eager)) if eager else None,
}
for key, want in expected.items():
    assert close(overall[key], want), (key, overall[key], want)
counts = collections.Counter(str(round(r)) for r in rewards)
assert overall["reward_counts"] == dict(counts), (overall["reward_counts"], counts)
PY
# Group sampling with seeds: one seed per (task, sample), every attempt of a sample the same, the
# samples of a task different; each request asks for its episode's seed plus its own index.
"$python" - "$tmp/store.db" "$tmp/requests.log" <<'PY' || { echo "FAIL: seeds"; exit 1; }
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
run_seed = json.loads(db.execute("SELECT settings FROM runs WHERE id = 1").fetchone()[0])["seed"]
assert isinstance(run_seed, int) and run_seed > 0, run_seed
by_sample = {}
for settings, in db.execute("SELECT settings FROM episodes"):
    s = json.loads(settings)
    by_sample.setdefault((s["run_task"], s["run_sample"]), set()).add(s["seed"])
assert len(by_sample) == 6 and all(len(seeds) == 1 for seeds in by_sample.values()), by_sample
seeds = {next(iter(v)) for v in by_sample.values()}
assert len(seeds) == 6, by_sample
asked = [json.loads(line)["body"].get("seed") for line in open(sys.argv[2])]
assert len(asked) >= 6 and all(isinstance(a, int) for a in asked), asked
assert all(any(0 <= a - (s & 0x7fffffffffffffff) < 5 for s in seeds) for a in asked), (asked, seeds)
PY
# Every export format, read back.
for f in verl verl-sft openrlhf rft jsonl; do
    "$kwb" export 1 --store "$tmp/store.db" --format "$f" --out "$tmp/export-$f.jsonl" 2> "$tmp/export.err" \
        || { cat "$tmp/export.err"; echo "FAIL: export $f"; exit 1; }
done
# Parquet (veRL reads its datasets as parquet), through the task Python's pyarrow: every format.
for f in verl verl-sft openrlhf rft jsonl; do
    "$kwb" export 1 --store "$tmp/store.db" --format "$f" --out "$tmp/export-$f.parquet" 2> "$tmp/export.err" \
        || { cat "$tmp/export.err"; echo "FAIL: export $f to parquet"; exit 1; }
done
"$python" - "$tmp" <<'PY' || { echo "FAIL: parquet exports differ from their JSON lines"; exit 1; }
import json, sys
import pyarrow.parquet as pq
for name in ("verl", "verl-sft", "openrlhf", "rft", "jsonl"):
    table = pq.read_table(f"{sys.argv[1]}/export-{name}.parquet")
    as_json = json.loads(table.schema.metadata[b"kwb.json_columns"])
    rows = [json.loads(line) for line in open(f"{sys.argv[1]}/export-{name}.jsonl")]
    assert table.num_rows == len(rows), (name, table.num_rows, len(rows))
    def same(got, want):
        # Arrow gives every struct all the keys seen in its column: the ones a row lacks read as None.
        if isinstance(want, dict):
            return (isinstance(got, dict) and all(same(got.get(k), v) for k, v in want.items())
                    and all(got[k] is None for k in got if k not in want))
        if isinstance(want, list):
            return isinstance(got, list) and len(got) == len(want) and all(map(same, got, want))
        return got == want
    assert rows or name == "rft", name  # no episode of this scripted run succeeds
    columns = sorted({key for row in rows for key in row})
    assert set(columns) <= set(table.column_names), (name, columns, table.column_names)
    for column in columns:
        values = table.column(column).to_pylist()
        if column in as_json:
            values = [None if v is None else json.loads(v) for v in values]
        for got, want in zip(values, (r.get(column) for r in rows)):
            assert same(got, want), (name, column, got, want)
    assert not (name == "verl" and "prompt" in as_json), as_json  # veRL reads prompt as messages
PY
"$python" - "$tmp" <<'PY' || { echo "FAIL: exports do not read back"; exit 1; }
import json, sys
def rows(name):
    with open(f"{sys.argv[1]}/export-{name}.jsonl") as f:
        return [json.loads(line) for line in f]
verl = rows("verl")
assert len(verl) == 3, len(verl)  # one prompt per task
for row in verl:
    assert set(row) == {"data_source", "prompt", "ability", "reward_model", "extra_info"}, row.keys()
    assert [m["role"] for m in row["prompt"]] == ["system", "user"], row["prompt"]
    assert row["reward_model"]["ground_truth"] == row["extra_info"]["task"]
sft = rows("verl-sft")
assert len(sft) == 6, len(sft)  # the settled episodes
names = {t["function"]["name"] for t in sft[0]["tools"]}
assert {"Read", "Write", "Edit", "Bash"} <= names, names
for row in sft:
    assert len(row["loss_mask"]) == len(row["messages"]) == len(row["sampled_tokens"])
    # --token-ids: every model reply keeps the tokens the server sampled, their log-probabilities
    # and ids (vLLM's "token_id:<n>" texts), as sent; prompts and tool output have none.
    for message, sampled in zip(row["messages"], row["sampled_tokens"]):
        if message["role"] != "assistant":
            assert sampled is None, sampled
            continue
        # The scripted server: log-probability -0.25 per position, ids from 1000 in order.
        n = len(sampled["ids"])
        assert n > 0 and len(sampled["text"]) == len(sampled["logprobs"]) == n, sampled
        assert sampled["ids"] == list(range(1000, 1000 + n)), sampled
        assert sampled["logprobs"] == [-0.25 * (k + 1) for k in range(n)], sampled
        assert sampled["text"] == [f"token_id:{i}" for i in sampled["ids"]], sampled
    assert isinstance(row["advantage"], float) or row["advantage"] == 0, row["advantage"]
    assert all(m == (1 if msg["role"] == "assistant" else 0) for m, msg in zip(row["loss_mask"], row["messages"]))
    # PPO's return per model turn: the reward flows back undiscounted (gamma 1); GAE decays by lambda.
    turns = [i for i, m in enumerate(row["loss_mask"]) if m == 1]
    assert [row["turn_returns"][i] for i in turns] == [row["reward"]] * len(turns), row["turn_returns"]
    assert all(row["turn_returns"][i] is None for i in range(len(row["messages"])) if i not in turns)
    last = row["turn_gae_advantages"][turns[-1]]
    assert last == row["reward"] and (len(turns) < 2 or abs(row["turn_gae_advantages"][turns[-2]] - 0.95 * last) < 1e-9)
rft = rows("rft")
assert all(r["reward"] >= 1 for r in rft) and len(rft) == sum(r["reward"] >= 1 for r in sft), (len(rft), [r["reward"] for r in sft])
assert len(rows("jsonl")) == 7  # every episode, the infrastructure error included
openrlhf = rows("openrlhf")
assert len(openrlhf) == 6, len(openrlhf)
by_episode = {r["extra_info"]["episode"]: r for r in sft}
for row in openrlhf:
    assert [m["role"] for m in row["input"]] == ["system", "user"], row["input"]
    twin = by_episode[row["episode"]]
    # The prompt and the rollout together are the whole conversation, in order.
    assert row["input"] + row["output"] == twin["messages"], row["episode"]
    assert row["output"][0]["role"] == "assistant", row["output"][0]
    assert row["label"] == twin["extra_info"]["task"] and row["reward"] == twin["reward"]
    assert row["advantage"] == twin["advantage"] and row["datasource"] == "kernel_workbench"
PY
if "$kwb" export 99 --store "$tmp/store.db" --format verl > /dev/null 2> "$tmp/export.err"; then echo "FAIL: a missing run exported"; exit 1; fi
grep -q "no such run" "$tmp/export.err" || { cat "$tmp/export.err"; echo "FAIL: unclear export error"; exit 1; }
kill "$server_pid"; wait "$server_pid" 2>/dev/null || true

# Killed halfway, then resumed. With --retries 0: the episodes the kill abandoned are no
# infrastructure failure of the item and are run again all the same.
"$python" - > "$tmp/script2.json" <<'PY'
import json
slow = {"text": "I looked at the candidate and there is nothing more to change here. Done.",
        "faults": [{"kind": "slow_tokens", "delay": 0.2}]}
print(json.dumps({"turns": [slow] * 12}))
PY
start_server "$tmp/script2.json"
OPENAI_API_KEY=sk-test-rollout "$kwb" rollout --tasks "$tmp/tasks" --episodes-per-task 2 --concurrency 2 \
    --provider openai --base-url "http://127.0.0.1:$port/v1" --model scripted --max-turns 5 \
    --device cpu --python "$python" --store "$tmp/store.db" --retries 0 > "$tmp/run2.out" 2>&1 &
rollout_pid=$!
settled=0
for _ in $(seq 600); do
    settled="$("$kwb" runs --store "$tmp/store.db" metrics 2 --json 2>/dev/null | "$python" -c 'import json,sys; print(json.load(sys.stdin)["overall"]["scored"])' 2>/dev/null || echo 0)"
    [ "$settled" -ge 1 ] && break
    sleep 0.2
done
# (A run that ended on its own before the kill is this check's failure, with its output.)
kill -9 "$rollout_pid" 2>/dev/null || true; wait "$rollout_pid" 2>/dev/null || true
[ "$settled" -ge 1 ] && [ "$settled" -lt 6 ] || { cat "$tmp/run2.out"; "$kwb" runs --store "$tmp/store.db" metrics 2 --json || true; echo "FAIL: expected a run killed halfway (settled $settled)"; exit 1; }
# Only read, the store already tells the truth: the killed run is interrupted, not running (and
# --store may follow the subcommand).
"$kwb" runs list --store "$tmp/store.db" | grep -q "^2	interrupted	" \
    || { "$kwb" runs list --store "$tmp/store.db"; echo "FAIL: a killed run still listed as running"; exit 1; }
# While another process holds the run (here a stand-in holding its lock), a resume is refused.
"$python" -c 'import fcntl, sys, time; f = open(sys.argv[1], "a+"); fcntl.flock(f, fcntl.LOCK_EX); f.write("4242\n"); f.flush(); print("held", flush=True); time.sleep(60)' \
    "$tmp/runs/store.db/run-2/run.lock" > "$tmp/holder.out" &
holder_pid=$!
for _ in $(seq 100); do grep -q held "$tmp/holder.out" && break; sleep 0.1; done
if OPENAI_API_KEY=sk-test-rollout "$kwb" rollout resume 2 --store "$tmp/store.db" > "$tmp/contested.out" 2>&1; then
    cat "$tmp/contested.out"; echo "FAIL: a run held by another process was resumed"; exit 1
fi
grep -q "run 2 is being executed by another process" "$tmp/contested.out" || { cat "$tmp/contested.out"; echo "FAIL: unclear contested-resume error"; exit 1; }
kill "$holder_pid"; wait "$holder_pid" 2>/dev/null || true
OPENAI_API_KEY=sk-test-rollout "$kwb" rollout resume 2 --store "$tmp/store.db" --json > "$tmp/resume.json" 2> "$tmp/resume.err" \
    || { cat "$tmp/resume.err" "$tmp/resume.json"; echo "FAIL: resume exited non-zero"; exit 1; }
"$python" - "$tmp/resume.json" "$tmp/store.db" <<'PY' || { cat "$tmp/resume.json"; echo "FAIL: resumed run"; exit 1; }
import json, sqlite3, sys
out = json.load(open(sys.argv[1]))
assert out["status"] == "finished" and out["planned"] == 6 and out["done"] == 6, out
rows = sqlite3.connect(sys.argv[2]).execute(
    "SELECT json_extract(settings, '$.run_task'), json_extract(settings, '$.run_sample'), count(*) "
    "FROM episodes WHERE json_extract(settings, '$.run_id') = 2 AND status = 'finished' "
    "GROUP BY 1, 2").fetchall()
assert len(rows) == 6 and all(count == 1 for _, _, count in rows), rows
running = sqlite3.connect(sys.argv[2]).execute(
    "SELECT count(*) FROM episodes WHERE status = 'running'").fetchone()[0]
assert running == 0, running
PY
kill "$server_pid"; wait "$server_pid" 2>/dev/null || true

# A task whose inputs do not fit this machine (16 GiB, sized before anything is allocated) is
# skipped with its reason: its first episode fails as the task's failure (no reward, outside the
# scored metrics), its other sample is not run, the run still succeeds, and a resume runs nothing.
mkdir -p "$tmp/huge"
sed 's/torch.randn(batch_size, dim,/torch.randn(1 << 28, 16,/' "$repo/resources/tasks/01_gelu.py" > "$tmp/huge/huge_gelu.py"
grep -q "1 << 28" "$tmp/huge/huge_gelu.py" || { echo "FAIL: the oversized task was not made"; exit 1; }
"$python" -c 'import json; print(json.dumps({"turns": [{"text": "Done."}] * 4}))' > "$tmp/script3.json"
start_server "$tmp/script3.json"
OPENAI_API_KEY=sk-test-rollout "$kwb" rollout --tasks "$tmp/huge" --episodes-per-task 2 --concurrency 1 \
    --provider openai --base-url "http://127.0.0.1:$port/v1" --model scripted --max-turns 3 \
    --device cpu --python "$python" --store "$tmp/store.db" --json > "$tmp/run3.json" 2> "$tmp/run3.err" \
    || { cat "$tmp/run3.err" "$tmp/run3.json"; echo "FAIL: a run with a skipped task exited non-zero"; exit 1; }
"$python" - "$tmp/run3.json" "$tmp/store.db" <<'PY' || { cat "$tmp/run3.json"; echo "FAIL: the oversized task was not skipped"; exit 1; }
import json, sqlite3, sys
out = json.load(open(sys.argv[1]))
assert out["status"] == "finished" and out["planned"] == 2 and out["done"] == 0 and out["skipped"] == 2, out
[task] = out["skipped_tasks"]
assert task["task"] == "huge_gelu" and task["reason"].startswith("task_too_large: ") and "GiB" in task["reason"], task
rows = sqlite3.connect(sys.argv[2]).execute(
    "SELECT status, end_cause, reward FROM episodes WHERE json_extract(settings, '$.run_id') = 3").fetchall()
assert rows == [("failed", "task_too_large", None)], rows
PY
"$kwb" runs --store "$tmp/store.db" metrics 3 --json | "$python" -c '
import json, sys
o = json.load(sys.stdin)["overall"]
assert o["scored"] == 0 and o["task_failures"] == 1 and o["episodes"] == 1, o' || { echo "FAIL: metrics of the skipped task"; exit 1; }
OPENAI_API_KEY=sk-test-rollout "$kwb" rollout resume 3 --store "$tmp/store.db" > "$tmp/resume3.out" 2>&1 \
    || { cat "$tmp/resume3.out"; echo "FAIL: resuming a run with a skipped task"; exit 1; }
grep -q "^run 3 finished: 0/2 done, 0 given up, 2 skipped" "$tmp/resume3.out" && grep -q "^skipped huge_gelu: task_too_large" "$tmp/resume3.out" \
    || { cat "$tmp/resume3.out"; echo "FAIL: the resume did not report the skip"; exit 1; }
"$python" - "$tmp/store.db" <<'PY' || { echo "FAIL: the resume ran the skipped task again"; exit 1; }
import sqlite3, sys
count = sqlite3.connect(sys.argv[1]).execute(
    "SELECT count(*) FROM episodes WHERE json_extract(settings, '$.run_id') = 3").fetchone()[0]
assert count == 1, count
PY
echo "PASS: a rollout completes with its metrics and exports; killed halfway, it resumes with nothing lost and nothing twice; a task too large for the machine is skipped with its reason"
