#!/usr/bin/env python3
"""`kwb-model train sft` on the model tools/setup.sh installs (SmolLM2-135M-Instruct, LoRA,
float32 on the CPU), fed a run's RFT export format (messages with a tool call, loss_mask): the
loss on the trained turns falls; a malformed row is skipped with its line named; the saved
folder opens in transformers, whose logits equal kwb-model's on that folder and differ from the
base model's; and the trained model now answers the training prompt as taught.

    test_model_train.py KWB_MODEL
"""

import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from packaged_model import smollm2_gguf

KWB_MODEL = sys.argv[1]

ANSWER = "Use one thread per element: blockDim 256, gridDim 16."
ROWS = [
    {"messages": [
        {"role": "system", "content": "You optimise CUDA kernels."},
        {"role": "user", "content": "How do I launch an add of 4096 floats?"},
        {"role": "assistant", "content": "Let me look at the model.",
         "tool_calls": [{"id": "c1", "type": "function",
                         "function": {"name": "read_file", "arguments": "{\"path\": \"model.py\"}"}}]},
        {"role": "tool", "content": "return a + b", "tool_call_id": "c1"},
        {"role": "assistant", "content": ANSWER}],
     "loss_mask": [0, 0, 1, 0, 1], "reward": 3.0},
]


def fail(message):
    raise SystemExit(f"FAIL: {message}")


def main():
    gguf_path = smollm2_gguf()
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "rft.jsonl")
        with open(data, "w") as f:
            f.write(json.dumps(ROWS[0]) + "\n")
            f.write("{not json\n")
            f.write(json.dumps({"messages": [{"role": "user", "content": "hi"}]}) + "\n")
        out = os.path.join(tmp, "trained")
        done = subprocess.run([KWB_MODEL, "train", "sft", gguf_path, "--data", data, "--out", out,
                               "--steps", "12", "--batch-size", "1", "--learning-rate", "2e-3",
                               "--lora-rank", "8", "--lora-alpha", "16"],
                              capture_output=True, text=True)
        if done.returncode != 0:
            fail(f"train sft exited {done.returncode}: {done.stderr.strip()}")
        for expected in ("rft.jsonl:2: skipped: not JSON", "rft.jsonl:3: skipped: no assistant turn"):
            if expected not in done.stderr:
                fail(f"expected '{expected}' on standard error: {done.stderr}")
        events = [json.loads(line) for line in done.stdout.splitlines()]
        steps = [e for e in events if e["event"] == "step"]
        if len(steps) != 12 or events[0]["conversations"] != 1:
            fail(f"expected 12 steps on one conversation: {events[0]}, {len(steps)} steps")
        first, last = steps[0]["loss"], steps[-1]["loss"]
        print(f"{events[0]['model']}, {events[0]['trainable_parameters']} trainable parameters; "
              f"loss {first:.3f} -> {last:.3f}; {steps[-1]['tokens']} trained tokens per step, "
              f"{np.median([s['tokens_per_second'] for s in steps]):.0f} tokens/s, "
              f"peak memory {steps[-1]['peak_memory_bytes'] / 2**20:.0f} MiB")
        if not last < 0.5 * first:
            fail(f"the loss did not fall enough: {first} -> {last}")

        tokenizer = AutoTokenizer.from_pretrained(out)
        trained = AutoModelForCausalLM.from_pretrained(out, dtype=torch.float32)
        base = AutoModelForCausalLM.from_pretrained(os.path.dirname(gguf_path),
                                                    gguf_file=os.path.basename(gguf_path),
                                                    dtype=torch.float32)
        prompt = tokenizer.apply_chat_template(ROWS[0]["messages"][:4], tokenize=False,
                                               add_generation_prompt=True)
        ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            theirs = trained(torch.tensor([ids])).logits[0].numpy()
            before = base(torch.tensor([ids])).logits[0].numpy()
        logits = os.path.join(tmp, "logits.f32")
        ours = subprocess.run([KWB_MODEL, "logits", out, "--ids", ",".join(map(str, ids)), "--out", logits],
                              capture_output=True, text=True)
        if ours.returncode != 0:
            fail(f"kwb-model logits on the trained folder: {ours.stderr.strip()}")
        got = np.fromfile(logits, dtype=np.float32).reshape(len(ids), -1)
        worst = float(np.abs(got - theirs).max())
        moved = float(np.abs(theirs - before).max())
        print(f"trained folder: transformers vs kwb-model max difference {worst:.2e}; "
              f"moved from the base by up to {moved:.2f}")
        # float32 rounding grows with the logits' size, which training has raised.
        bound = max(1e-4, 1e-5 * float(np.abs(theirs).max()))
        if worst > bound:
            fail(f"transformers and kwb-model disagree on the trained folder by {worst} (bound {bound})")
        if moved < 0.5:
            fail("the trained folder's logits are the base model's")
        with torch.no_grad():
            answer = trained.generate(torch.tensor([ids]), max_new_tokens=24, do_sample=False)
        text = tokenizer.decode(answer[0][len(ids):], skip_special_tokens=True)
        print(f"trained answer: {text!r}")
        if not text.startswith(ANSWER[:20]):
            fail(f"the trained model does not answer as taught: {text!r}")

        # Nothing usable: a clear refusal, nothing written.
        bad = os.path.join(tmp, "bad.jsonl")
        with open(bad, "w") as f:
            f.write("[]\n")
        refused = subprocess.run([KWB_MODEL, "train", "sft", gguf_path, "--data", bad, "--out",
                                  os.path.join(tmp, "never")], capture_output=True, text=True)
        if refused.returncode != 2 or "no usable conversation" not in refused.stderr:
            fail(f"a file without usable rows: exit {refused.returncode}, {refused.stderr.strip()}")
        if os.path.exists(os.path.join(tmp, "never")):
            fail("a refused run wrote a model folder")
    print("PASS")


if __name__ == "__main__":
    main()
