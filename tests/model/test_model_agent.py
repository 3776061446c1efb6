#!/usr/bin/env python3
"""`kwb agent --provider local`: an agent episode whose model is the one tools/setup.sh installs
(SmolLM2-135M-Instruct GGUF), run by kwb-model on the CPU with no server. The episode is stored
with the provider's settings (so it can be resumed), and every reply carries the model's own
token ids and log-probabilities, one per generated token, within the token limit.

    test_model_agent.py KWB TASK
"""

import json
import math
import os
import subprocess
import sys
import tempfile

from packaged_model import smollm2_gguf

KWB, TASK = sys.argv[1], sys.argv[2]
MAX_TOKENS = 24


def fail(message):
    raise SystemExit(f"FAIL: {message}")


def main():
    gguf_path = smollm2_gguf()
    with tempfile.TemporaryDirectory() as tmp:
        store = os.path.join(tmp, "store.db")
        run = subprocess.run([KWB, "agent", "--provider", "local", "--model", gguf_path,
                              "--model-device", "cpu", "--device", "cpu", "--task", TASK,
                              "--max-turns", "1", "--max-tokens", str(MAX_TOKENS), "--logprobs",
                              "--workspace", os.path.join(tmp, "ws"), "--store", store],
                             capture_output=True, text=True, timeout=900)
        if run.returncode != 0:
            fail(f"kwb agent exited {run.returncode}:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}")
        if "provider local " + gguf_path + " (kwb-model, cpu)" not in run.stdout:
            fail(f"the provider is not described as the local model:\n{run.stdout[:1000]}")
        export = os.path.join(tmp, "episode.jsonl")
        done = subprocess.run([KWB, "episodes", "--store", store, "export", "1", "--out", export],
                              capture_output=True, text=True)
        if done.returncode != 0:
            fail(f"export failed: {done.stderr}")
        episode = json.loads(open(export).readline())
        settings = episode["episode"].get("settings", {})
        if settings.get("provider_kind") != "local" or settings.get("local_device") != "cpu":
            fail(f"the episode's settings do not name the local provider: {settings}")
        if settings.get("max_tokens") != MAX_TOKENS:
            fail(f"the token limit is not recorded: {settings}")
        replies = [e["payload"] for e in episode["events"] if e["kind"] == "assistant_message"]
        if not replies:
            fail("no assistant message was stored")
        for reply in replies:
            tokens = reply.get("tokens", {})
            ids, logprobs = tokens.get("ids", []), tokens.get("logprobs", [])
            if not ids or len(ids) != len(logprobs) or len(ids) > MAX_TOKENS:
                fail(f"a reply's tokens are not one log-probability per id within the limit: {tokens}")
            if not all(isinstance(i, int) and 0 <= i < 49152 for i in ids):
                fail(f"token ids outside the vocabulary: {ids}")
            if not all(math.isfinite(p) and p <= 0.0 for p in logprobs):
                fail(f"log-probabilities that are not ones: {logprobs}")
            if reply.get("usage", {}).get("output_tokens") != len(ids):
                fail(f"the usage does not count the reply's tokens: {reply.get('usage')}")
            if reply.get("usage", {}).get("input_tokens", 0) < 100:
                fail(f"the prompt (system prompt, task, tools) was not counted: {reply.get('usage')}")
        print(f"ok: {len(replies)} repl{'y' if len(replies) == 1 else 'ies'} from the local model, "
              f"{sum(len(r['tokens']['ids']) for r in replies)} tokens with log-probabilities; "
              f"prompt {replies[0]['usage']['input_tokens']} tokens")


if __name__ == "__main__":
    main()
