#!/usr/bin/env python3
"""`kwb train value|ppo|grpo --config` on episodes a local model wrote, with the model
tools/setup.sh installs (SmolLM2-135M-Instruct GGUF, LoRA, float32 on the CPU).

The replies are sampled by `kwb-model serve` at temperature 1 and recorded as the agent's local
provider records them (token ids and log-probabilities), so the trainer's first PPO step must
find the policy where the sampler left it: approximate KL ~0 and nothing clipped. A wrong id or
log-probability anywhere between sampling and training shows up there. Also: value pretraining
saves a critic that PPO starts from; PPO's value steps come first; GRPO trains on the tasks'
groups; a row with ids the model does not have is skipped and named; the trained model is saved.

    test_model_train_rl.py KWB KWB_MODEL
"""

import glob
import json
import math
import os
import socket
import subprocess
import sys
import tempfile

from packaged_model import smollm2_gguf

KWB, KWB_MODEL = sys.argv[1], sys.argv[2]
PROMPTS = [("t-add", "Write a CUDA kernel that adds two vectors."),
           ("t-relu", "How do I make a ReLU kernel faster?")]


def fail(message):
    raise SystemExit(f"FAIL: {message}")


def sample_episodes(gguf_path):
    """Two replies per prompt from kwb-model serve, as the local provider asks for them."""
    parent, child = socket.socketpair()
    parent_fd = os.dup2(parent.detach(), 50)
    child_fd = os.dup2(child.detach(), 51)
    os.dup2(child_fd, 3)
    server = subprocess.Popen([KWB_MODEL, "--threads", "2", "serve", gguf_path], pass_fds=(3,),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(3)
    os.close(child_fd)
    channel = socket.socket(fileno=parent_fd).makefile("rw")
    ready = json.loads(channel.readline())
    if not ready.get("ready"):
        fail(f"kwb-model serve did not start: {ready}")
    rows = []
    for index, (task, prompt) in enumerate(PROMPTS):
        messages = [{"role": "system", "content": "You write CUDA kernels."},
                    {"role": "user", "content": prompt}]
        channel.write(json.dumps({"id": index + 1, "op": "sample", "messages": messages,
                                  "count": 2, "max_tokens": 12, "temperature": 1.0,
                                  "seed": 7 + index}) + "\n")
        channel.flush()
        reply = json.loads(channel.readline())
        if "error" in reply:
            fail(f"sampling failed: {reply['error']}")
        for k, s in enumerate(reply["samples"]):
            rows.append({"messages": messages + [{"role": "assistant", "content": s["text"]}],
                         "loss_mask": [0, 0, 1],
                         "sampled_tokens": [None, None, {"ids": s["tokens"], "logprobs": s["logprobs"]}],
                         "reward": [-1.0, 2.0][k] + index,
                         "extra_info": {"task": task}})
    channel.write(json.dumps({"op": "quit"}) + "\n")
    channel.flush()
    server.wait(timeout=60)
    return rows


def train(algorithm, folder, settings):
    config = os.path.join(folder, f"{algorithm}.json")
    with open(config, "w") as f:
        json.dump(settings, f)
    done = subprocess.run([KWB, "train", algorithm, "--config", config], capture_output=True,
                          text=True, timeout=600)
    if done.returncode != 0:
        fail(f"kwb train {algorithm} exited {done.returncode}:\n{done.stderr[-3000:]}")
    out = settings["out"]
    steps = [json.loads(line) for line in open(os.path.join(out, "steps.jsonl"))]
    return [s for s in steps if s.get("event") == "step"], done


def main():
    gguf_path = smollm2_gguf()
    rows = sample_episodes(gguf_path)
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "episodes.jsonl")
        with open(data, "w") as f:
            for row in rows:
                f.write(json.dumps(row) + "\n")
            broken = json.loads(json.dumps(rows[0]))
            broken["sampled_tokens"][2]["ids"][0] = 10 ** 7
            f.write(json.dumps(broken) + "\n")
        common = {"model": gguf_path, "data": data, "device": "cpu", "lora_rank": 4,
                  "batch_size": 4}

        value_out = os.path.join(tmp, "value")
        value_steps, _ = train("value", tmp, dict(common, out=value_out, steps=2,
                                                   critic_learning_rate=1e-3))
        if len(value_steps) != 2 or not all(s["phase"] == "value" for s in value_steps):
            fail(f"value pretraining took other steps: {value_steps}")
        checkpoint = os.path.join(value_out, "checkpoint.pt")
        if not os.path.exists(checkpoint) or os.path.exists(os.path.join(value_out, "model")):
            fail("value pretraining must leave a checkpoint and no model")
        log = open(os.path.join(value_out, "train.log")).read()
        if "is not a token of this model" not in log:
            fail(f"the row with a foreign token id was not named: {log[-2000:]}")

        ppo_out = os.path.join(tmp, "ppo")
        ppo_steps, _ = train("ppo", tmp, dict(common, out=ppo_out, steps=2, value_steps=1,
                                               checkpoint_in=checkpoint, learning_rate=1e-3))
        phases = [s["phase"] for s in ppo_steps]
        if phases != ["value", "policy", "policy"]:
            fail(f"PPO's steps: {phases}")
        first = ppo_steps[1]
        if not (abs(first["approximate_kl"]) < 1e-3 and first["clip_fraction"] == 0.0):
            fail("the first PPO step did not find the policy where the sampler left it "
                 f"(recorded ids or log-probabilities differ from the trainer's): {first}")
        if not all(math.isfinite(s["loss"]) and s["tokens"] > 0 for s in ppo_steps):
            fail(f"a step without a finite loss or trained tokens: {ppo_steps}")
        model_dir = os.path.join(ppo_out, "model")
        if not glob.glob(os.path.join(model_dir, "*.safetensors")) or \
                not os.path.exists(os.path.join(model_dir, "config.json")):
            fail(f"the trained model was not saved in {model_dir}")
        summary = json.load(open(os.path.join(ppo_out, "summary.json")))
        if summary["rows"] != len(rows) + 1 or summary["steps"] != 3:
            fail(f"summary: {summary}")

        grpo_steps, _ = train("grpo", tmp, dict(common, out=os.path.join(tmp, "grpo"), steps=1))
        if len(grpo_steps) != 1 or grpo_steps[0]["mean_reward"] == 0.0:
            fail(f"GRPO's step: {grpo_steps}")
        print(f"ok: value loss {value_steps[0]['value_loss']:.4f} -> "
              f"{value_steps[-1]['value_loss']:.4f}; first PPO step kl "
              f"{first['approximate_kl']:.2e}, clip {first['clip_fraction']}; "
              f"GRPO loss {grpo_steps[0]['loss']:.4f}")


if __name__ == "__main__":
    main()
