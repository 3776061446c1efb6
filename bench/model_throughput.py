#!/usr/bin/env python3
"""Generation and training throughput of kwb-model against PyTorch Python running the same model
and the same maths, in one run on one device (issue 18's evidence).

kwb side: `kwb-model serve` (LoRA on all seven projections; sampling runs each adapted projection
as one product with its merged float32 weight, training runs the adapters beside the frozen
weights), spoken to in JSON lines: `sample`
with ignore_eos (every reply exactly --new-tokens long) for each batch size, then `grpo` steps
on a group of those samples. Its `save` writes the model as a Hugging Face folder before any
update, which is what the PyTorch side loads.

PyTorch side: transformers' `generate` (sampling, temperature 1, the end tokens suppressed until
--new-tokens) on the same prompt ids, and a GRPO step written out as PolicyTrainer does it
(engine/torch): LoRA adapters in float32 over the frozen weights (A uniform within 1/sqrt(in),
B zero), log-softmax in float32 from the first trained position, group-normalised advantages,
the clipped ratio loss against the sampler's log-probabilities, gradient norm clipped to 1,
AdamW. Both start from B = 0, so their first steps' losses must agree: the script reports the
difference as a check that the maths is the same.

    model_throughput.py --kwb-model PATH --model GGUF_OR_FOLDER [--device cuda] [--json FILE]
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

PROMPT = [{"role": "system", "content": "You are a helpful assistant."},
          {"role": "user", "content": "Write a long story about a GPU kernel engineer who "
                                      "tunes a softmax kernel for a week."}]


class Serve:
    """kwb-model serve on stdin/stdout."""

    def __init__(self, kwb_model, model, device, log, rank, alpha, learning_rate, env=None):
        self.process = subprocess.Popen(
            [kwb_model, "serve", model, "--device", device, "--lora-rank", str(rank),
             "--lora-alpha", str(alpha), "--learning-rate", str(learning_rate)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True,
            env=dict(os.environ, **env) if env else None)
        self.ready = self.read()
        if "error" in self.ready:
            raise SystemExit(f"kwb-model serve did not start: {self.ready['error']}")

    def read(self):
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit("kwb-model serve ended (see its log)")
        return json.loads(line)

    def ask(self, request):
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        reply = self.read()
        if "error" in reply:
            raise SystemExit(f"kwb-model serve: {request['op']}: {reply['error']}")
        return reply

    def quit(self):
        self.process.stdin.write('{"op": "quit"}\n')
        self.process.stdin.flush()
        self.process.wait(timeout=60)


def synchronise(torch, device):
    if device == "cuda":
        torch.cuda.synchronize()


def median(values):
    return statistics.median(values) if values else 0.0


def kwb_generation(serve, args):
    """Tokens per second of `sample` at each batch size; the prompt's ids, the last reply and how
    the steps ran (CUDA graphs or eager, the reply's `decoding`)."""
    generation = {}
    prompt_tokens, last = None, None
    for batch in args.batches:
        rates = []
        for repeat in range(args.repeats + 1):  # the first is a warm-up
            reply = serve.ask({"op": "sample", "messages": PROMPT, "count": batch,
                               "max_tokens": args.new_tokens, "temperature": 1.0,
                               "ignore_eos": True, "seed": 100 + repeat})
            tokens = sum(len(s["tokens"]) for s in reply["samples"])
            if tokens != batch * args.new_tokens:
                raise SystemExit(f"kwb-model generated {tokens} tokens, not "
                                 f"{batch * args.new_tokens}: ignore_eos did not hold")
            if repeat:
                rates.append(tokens / reply["seconds"])
            prompt_tokens, last = reply["prompt_tokens"], reply
        generation[batch] = {"tokens_per_second": median(rates), "runs": rates,
                             "decoding": last.get("decoding")}
    return generation, prompt_tokens, last


def kwb_eager_generation(args, log):
    """The same generation with every step's kernels launched one by one (KWB_CUDA_GRAPHS=off):
    what the CUDA graphs are worth."""
    serve = Serve(args.kwb_model, args.model, args.device, log, args.lora_rank, args.lora_alpha,
                  args.learning_rate, env={"KWB_CUDA_GRAPHS": "off"})
    generation, _, _ = kwb_generation(serve, args)
    serve.quit()
    return generation


def kwb_side(args, folder, log):
    serve = Serve(args.kwb_model, args.model, args.device, log, args.lora_rank, args.lora_alpha,
                  args.learning_rate)
    result = {"model": serve.ready.get("model"),
              "trainable_parameters": serve.ready.get("trainable_parameters")}
    # Saved before any update: the adapters' B is zero, so the folder holds the base weights.
    serve.ask({"op": "save", "out": folder})
    generation, prompt_tokens, last = kwb_generation(serve, args)
    result["generation"] = generation
    result["prompt_tokens"] = len(prompt_tokens)

    # A training batch: the last group's samples, rewards alternating so every advantage is
    # non-zero.
    samples = last["samples"][:args.train_batch]
    episodes = [{"prompt_tokens": prompt_tokens, "tokens": s["tokens"], "logprobs": s["logprobs"],
                 "reward": 1.0 if i % 2 == 0 else -1.0, "group": 0}
                for i, s in enumerate(samples)]
    steps = []
    for _ in range(args.repeats + 1):
        steps.append(serve.ask({"op": "grpo", "episodes": episodes}))
    result["training"] = {
        "first_step": steps[0],
        "second_step": steps[1],
        "tokens_per_second": median([s["tokens_per_second"] for s in steps[1:]]),
        "runs": [s["tokens_per_second"] for s in steps[1:]],
        "peak_memory_bytes": steps[-1]["peak_memory_bytes"],
        "sequences": len(episodes),
        "tokens_per_sequence": len(prompt_tokens) + args.new_tokens}
    serve.quit()
    return result, prompt_tokens, episodes


class LoraLinear:
    """Wraps a torch.nn.Linear's forward with PolicyTrainer's adapter (engine/torch/lora_linear)."""

    def __init__(self, torch, linear, rank, alpha, generator):
        self.torch = torch
        self.linear = linear
        self.scale = alpha / rank
        out_features, in_features = linear.weight.shape
        bound = 1.0 / math.sqrt(in_features)
        self.a = (torch.empty(rank, in_features, dtype=torch.float32)
                  .uniform_(-bound, bound, generator=generator)
                  .to(linear.weight.device).requires_grad_(True))
        self.b = torch.zeros(out_features, rank, dtype=torch.float32,
                             device=linear.weight.device, requires_grad=True)
        base_forward = linear.forward

        def forward(x):
            base = base_forward(x)
            update = torch.nn.functional.linear(
                torch.nn.functional.linear(x.float(), self.a), self.b)
            return base + (self.scale * update).to(base.dtype)

        linear.forward = forward


def torch_side(args, folder, prompt_tokens, episodes):
    import torch
    from transformers import AutoModelForCausalLM

    device = args.device
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=dtype).to(device)
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    # Every reply exactly --new-tokens long, as kwb-model's ignore_eos makes them: the end
    # tokens are suppressed until then.
    eos = model.generation_config.eos_token_id or model.config.eos_token_id
    end_ids = eos if isinstance(eos, list) else [eos]
    prompt = torch.tensor([prompt_tokens], device=device)
    generation = {}
    for batch in args.batches:
        rates = []
        for repeat in range(args.repeats + 1):
            torch.manual_seed(100 + repeat)
            ids = prompt.repeat(batch, 1)
            synchronise(torch, device)
            started = time.perf_counter()
            with torch.no_grad():
                out = model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=True,
                                     temperature=1.0, top_k=0, top_p=1.0,
                                     max_new_tokens=args.new_tokens,
                                     min_new_tokens=args.new_tokens,
                                     eos_token_id=end_ids, pad_token_id=end_ids[0])
            synchronise(torch, device)
            seconds = time.perf_counter() - started
            tokens = (out.shape[1] - ids.shape[1]) * batch
            if repeat:
                rates.append(tokens / seconds)
        generation[batch] = {"tokens_per_second": median(rates), "runs": rates}

    # PolicyTrainer's GRPO step, written out; the adapters drawn as kwb-model draws them (one
    # generator per adapter, seeded 1, 2, ... layer by layer in this projection order), so both
    # sides start from the same A and their steps can be compared number for number.
    adapters = []
    seed = 1
    for layer in model.model.layers:
        for name in ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"):
            module = getattr(layer.self_attn if name.endswith(("q_proj", "k_proj", "v_proj",
                                                                "o_proj")) else layer.mlp, name)
            generator = torch.Generator().manual_seed(seed)
            seed += 1
            adapters.append(LoraLinear(torch, module, args.lora_rank, args.lora_alpha, generator))
    parameters = [t for a in adapters for t in (a.a, a.b)]
    optimiser = torch.optim.AdamW(parameters, lr=args.learning_rate, weight_decay=0.0)
    ids = torch.tensor([prompt_tokens + e["tokens"] for e in episodes], device=device)
    T = ids.shape[1]
    first = len(prompt_tokens) - 1  # the first position whose prediction is trained
    old = torch.tensor([e["logprobs"] for e in episodes], device=device, dtype=torch.float32)
    rewards = torch.tensor([e["reward"] for e in episodes], dtype=torch.float64)
    advantages = ((rewards - rewards.mean()) / (rewards.std() + 1e-6)).float().to(device)
    advantages = advantages.unsqueeze(1).expand_as(old)
    model.train()
    steps = []
    for _ in range(args.repeats + 1):
        synchronise(torch, device)
        started = time.perf_counter()
        hidden = model.model(input_ids=ids).last_hidden_state
        logits = torch.nn.functional.linear(hidden[:, first:T - 1], model.lm_head.weight)
        log_softmax = logits.float().log_softmax(-1)
        new = log_softmax.gather(-1, ids[:, first + 1:].unsqueeze(-1)).squeeze(-1)
        entropy = -(log_softmax.exp() * log_softmax).sum(-1)
        log_ratio = new - old
        ratio = log_ratio.exp()
        clipped = ratio.clamp(1 - 0.2, 1 + 0.28)
        objective = torch.min(ratio * advantages, clipped * advantages)
        loss = -objective.mean()
        optimiser.zero_grad()
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(parameters, 1.0)
        optimiser.step()
        synchronise(torch, device)
        seconds = time.perf_counter() - started
        with torch.no_grad():
            steps.append({"loss": loss.item(), "entropy": entropy.mean().item(),
                          "clip_fraction": (clipped * advantages < ratio * advantages)
                          .float().mean().item(),
                          "approximate_kl": ((ratio - 1) - log_ratio).mean().item(),
                          "grad_norm": float(grad_norm),
                          "tokens_per_second": ids.numel() / seconds, "seconds": seconds})
    peak = torch.cuda.max_memory_allocated() if device == "cuda" else 0
    return {"generation": generation,
            "training": {"first_step": steps[0], "second_step": steps[1],
                         "tokens_per_second": median([s["tokens_per_second"] for s in steps[1:]]),
                         "runs": [s["tokens_per_second"] for s in steps[1:]],
                         "peak_memory_bytes": peak}}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kwb-model", required=True)
    parser.add_argument("--model", required=True, help="GGUF file or Hugging Face folder")
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--batches", default="1,16,64",
                        type=lambda s: [int(x) for x in s.split(",")])
    parser.add_argument("--new-tokens", type=int, default=128)
    parser.add_argument("--train-batch", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3, help="timed runs after a warm-up (>= 1)")
    parser.add_argument("--lora-rank", type=int, default=16)
    parser.add_argument("--lora-alpha", type=float, default=32.0)
    parser.add_argument("--learning-rate", type=float, default=1e-4)
    parser.add_argument("--json", help="Write every figure here")
    parser.add_argument("--no-eager", action="store_true",
                        help="skip kwb-model's generation with CUDA graphs off")
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    if args.train_batch > args.batches[-1]:
        parser.error("--train-batch takes its samples from the last batch size")

    with tempfile.TemporaryDirectory() as tmp:
        folder = os.path.join(tmp, "model")
        with open(os.path.join(tmp, "serve.log"), "w") as log:
            kwb, prompt_tokens, episodes = kwb_side(args, folder, log)
            if args.device == "cuda" and not args.no_eager:
                kwb["generation_eager"] = kwb_eager_generation(args, log)
        pytorch = torch_side(args, folder, prompt_tokens, episodes)

    import torch
    import transformers
    report = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "device": (torch.cuda.get_device_name(0) if args.device == "cuda" else "cpu"),
              "torch": torch.__version__, "transformers": transformers.__version__,
              "new_tokens": args.new_tokens, "prompt_tokens": kwb["prompt_tokens"],
              "kwb": kwb, "pytorch": pytorch}
    k1, p1 = kwb["training"]["first_step"], pytorch["training"]["first_step"]
    k2, p2 = kwb["training"]["second_step"], pytorch["training"]["second_step"]
    report["agreement"] = {
        "first_step_grad_norm": [k1["grad_norm"], p1["grad_norm"]],
        "first_step_entropy": [k1["entropy"], p1["entropy"]],
        "second_step_loss": [k2["loss"], p2["loss"]],
        "second_step_clip_fraction": [k2["clip_fraction"], p2["clip_fraction"]]}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)

    print(f"# {report['device']}, torch {report['torch']}, transformers "
          f"{report['transformers']}; {kwb['model']}; prompt {kwb['prompt_tokens']} tokens, "
          f"{args.new_tokens} new tokens per reply")
    print("| measure | kwb-model | PyTorch (transformers) | kwb / PyTorch |")
    print("|---|---|---|---|")
    for batch in args.batches:
        k = kwb["generation"][batch]["tokens_per_second"]
        p = pytorch["generation"][batch]["tokens_per_second"]
        print(f"| generation, batch {batch}, tokens/s ({kwb['generation'][batch].get('decoding')}) "
              f"| {k:,.0f} | {p:,.0f} | {k / p:.2f}x |")
        eager = kwb.get("generation_eager", {}).get(batch)
        if eager:
            e = eager["tokens_per_second"]
            print(f"| generation, batch {batch}, tokens/s, kwb with CUDA graphs off | {e:,.0f} | "
                  f"{p:,.0f} | {e / p:.2f}x |")
    k = kwb["training"]["tokens_per_second"]
    p = pytorch["training"]["tokens_per_second"]
    print(f"| GRPO step, {len(episodes)} x {kwb['training']['tokens_per_sequence']} tokens, "
          f"tokens/s | {k:,.0f} | {p:,.0f} | {k / p:.2f}x |")
    km, pm = kwb["training"]["peak_memory_bytes"], pytorch["training"]["peak_memory_bytes"]
    if km and pm:
        print(f"| peak GPU memory (allocated), MiB | {km / 2**20:,.0f} | {pm / 2**20:,.0f} | "
              f"{km / pm:.2f}x |")
    # The same maths: from the same adapters, the same gradient, so the same second step.
    print(f"same maths (kwb vs PyTorch): first step gradient norm {k1['grad_norm']:.6g} vs "
          f"{p1['grad_norm']:.6g}, entropy {k1['entropy']:.5f} vs {p1['entropy']:.5f}; second "
          f"step loss {k2['loss']:.6g} vs {p2['loss']:.6g}, clip fraction "
          f"{k2['clip_fraction']:.4f} vs {p2['clip_fraction']:.4f}")


if __name__ == "__main__":
    sys.exit(main())
