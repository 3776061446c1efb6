#!/usr/bin/env python3
"""kwb-model's libtorch Llama against transformers on the model tools/setup.sh installs
(SmolLM2-135M-Instruct, GGUF Q4_1, dequantized; float32 on the CPU): the logits of every
position equal transformers' own GGUF loading within 1e-4, loading from the GGUF file and from
the Hugging Face folder `kwb model convert` writes; greedy generation with the key/value cache
gives transformers' greedy `generate` tokens (and a full forward pass's), with log-probabilities
equal to its scores; a stop token ends it; seeded sampling repeats. A small random Qwen2 (q, k and
v biases), as transformers saves it and as a qwen2 GGUF file, and a small Llama with Llama 3's
rotary scaling give transformers' logits too.

    test_model_logits.py KWB KWB_MODEL
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

KWB, KWB_MODEL = sys.argv[1], sys.argv[2]


# Hugging Face's Qwen2 names and GGUF's (llama.cpp's tensor map, as facts).
_GGUF_NAMES = {"model.embed_tokens.weight": "token_embd.weight", "model.norm.weight": "output_norm.weight",
               "lm_head.weight": "output.weight"}
_GGUF_LAYER_NAMES = {
    "input_layernorm.weight": "attn_norm.weight", "post_attention_layernorm.weight": "ffn_norm.weight",
    "self_attn.q_proj.weight": "attn_q.weight", "self_attn.k_proj.weight": "attn_k.weight",
    "self_attn.v_proj.weight": "attn_v.weight", "self_attn.q_proj.bias": "attn_q.bias",
    "self_attn.k_proj.bias": "attn_k.bias", "self_attn.v_proj.bias": "attn_v.bias",
    "self_attn.o_proj.weight": "attn_output.weight", "mlp.gate_proj.weight": "ffn_gate.weight",
    "mlp.up_proj.weight": "ffn_up.weight", "mlp.down_proj.weight": "ffn_down.weight"}


def largest_difference(model, ids, expected) -> float:
    """How far a transformers model's logits for ``ids`` are from ``expected``."""
    with torch.no_grad():
        return float(np.abs(model(torch.tensor([ids])).logits[0].numpy() - expected).max())


def kwb_model_logits(path, ids, label):
    """kwb-model's logits for ``ids`` from the model at ``path``, [positions, vocabulary]."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "logits.f32")
        done = subprocess.run([KWB_MODEL, "logits", path, "--ids", ",".join(map(str, ids)), "--out", out],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"FAIL: kwb-model logits ({label}): {done.stderr.strip()}")
        return np.fromfile(out, dtype=np.float32).reshape(len(ids), -1)


def write_qwen2_gguf(model, path, rope_theta):
    """The model as a qwen2-architecture GGUF file (F32), its Q and K rows in Hugging Face's
    order as llama.cpp's qwen2 converter leaves them."""
    import gguf

    c = model.config
    writer = gguf.GGUFWriter(path, "qwen2")
    writer.add_block_count(c.num_hidden_layers)
    writer.add_vocab_size(c.vocab_size)
    writer.add_context_length(c.max_position_embeddings)
    writer.add_embedding_length(c.hidden_size)
    writer.add_feed_forward_length(c.intermediate_size)
    writer.add_head_count(c.num_attention_heads)
    writer.add_head_count_kv(c.num_key_value_heads)
    writer.add_rope_freq_base(rope_theta)  # transformers 5 keeps it in rope_parameters
    writer.add_layer_norm_rms_eps(c.rms_norm_eps)
    for name, value in model.state_dict().items():
        if name not in _GGUF_NAMES:
            _, _, index, rest = name.split(".", 3)
        writer.add_tensor(_GGUF_NAMES.get(name) or f"blk.{index}.{_GGUF_LAYER_NAMES[rest]}",
                          value.float().numpy().copy())
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def qwen2_files():
    """A small Qwen2 with random weights, its q/k/v biases made large enough to matter (Qwen2's
    own initialisation zeroes them), saved by transformers as a folder and written as a qwen2
    GGUF file: kwb-model's logits equal the model's from both, and transformers' own GGUF
    loading of that file agrees (the file follows llama.cpp's qwen2 layout)."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(3)
    config = Qwen2Config(vocab_size=320, hidden_size=64, intermediate_size=160, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                         rope_theta=1000000.0, tie_word_embeddings=False, use_sliding_window=False)
    model = Qwen2ForCausalLM(config).to(torch.float32).eval()
    with torch.no_grad():
        for layer in model.model.layers:
            for projection in (layer.self_attn.q_proj, layer.self_attn.k_proj, layer.self_attn.v_proj):
                projection.bias.normal_(0.0, 0.5)
    ids = torch.randint(0, config.vocab_size, (37,)).tolist()
    with torch.no_grad():
        expected = model(torch.tensor([ids])).logits[0].numpy()
        without_biases = Qwen2ForCausalLM(config).eval()
        without_biases.load_state_dict(model.state_dict())
        for layer in without_biases.model.layers:
            for projection in (layer.self_attn.q_proj, layer.self_attn.k_proj, layer.self_attn.v_proj):
                projection.bias.zero_()
    biases_matter = largest_difference(without_biases, ids, expected)
    if biases_matter < 1e-2:
        raise SystemExit(f"FAIL: the test's biases do not change the logits ({biases_matter})")
    with tempfile.TemporaryDirectory() as tmp:
        folder = os.path.join(tmp, "qwen2")
        model.save_pretrained(folder, safe_serialization=True)
        gguf_path = os.path.join(tmp, "qwen2.gguf")
        write_qwen2_gguf(model, gguf_path, 1000000.0)
        loaded = AutoModelForCausalLM.from_pretrained(tmp, gguf_file="qwen2.gguf", dtype=torch.float32)
        layout = largest_difference(loaded, ids, expected)
        if layout > 1e-4:
            raise SystemExit(f"FAIL: transformers reads the test's qwen2 GGUF differently ({layout})")
        for label, path in (("Qwen2 folder", folder), ("qwen2 GGUF", gguf_path)):
            worst = float(np.abs(kwb_model_logits(path, ids, label) - expected).max())
            print(f"{label} (random, q/k/v biases): {len(ids)} positions, max difference {worst:.2e}; "
                  f"the biases move the logits by {biases_matter:.2e}")
            if worst > 1e-4:
                raise SystemExit(f"FAIL: {label}: logits differ from transformers' by {worst}")


def llama3_rotary_scaling():
    """A small random Llama with Llama 3's rotary scaling over an original context shorter than
    the sequence (every kind of frequency: kept, blended, divided), saved by transformers:
    kwb-model's logits equal its own, and differ from the unscaled model's."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(5)
    scaling = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
               "original_max_position_embeddings": 32}
    common = dict(vocab_size=300, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                  num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=256,
                  tie_word_embeddings=True)
    model = LlamaForCausalLM(LlamaConfig(rope_scaling=scaling, **common)).eval()
    plain = LlamaForCausalLM(LlamaConfig(**common)).eval()
    plain.load_state_dict(model.state_dict())
    ids = torch.randint(0, 300, (120,)).tolist()
    with torch.no_grad():
        expected = model(torch.tensor([ids])).logits[0].numpy()
    scaling_matters = largest_difference(plain, ids, expected)
    if scaling_matters < 1e-3:
        raise SystemExit(f"FAIL: the test's rotary scaling does not change the logits ({scaling_matters})")
    with tempfile.TemporaryDirectory() as tmp:
        folder = os.path.join(tmp, "llama3")
        model.save_pretrained(folder, safe_serialization=True)
        worst = float(np.abs(kwb_model_logits(folder, ids, "Llama 3 scaling") - expected).max())
        info = subprocess.run([KWB, "model", "info", folder], capture_output=True, text=True).stdout
        if "rope scaling  llama3, factor 8, original context 32" not in info:
            raise SystemExit(f"FAIL: kwb model info does not name the rotary scaling:\n{info}")
    print(f"Llama 3 rotary scaling (random, original context 32, {len(ids)} positions): max difference "
          f"{worst:.2e}; the scaling moves the logits by {scaling_matters:.2e}")
    if worst > 1e-4:
        raise SystemExit(f"FAIL: Llama 3 scaled logits differ from transformers' by {worst}")


def main():
    qwen2_files()
    llama3_rotary_scaling()
    gguf_path = smollm2_gguf()
    folder, name = os.path.dirname(gguf_path), os.path.basename(gguf_path)
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    reference = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    text = ("<|im_start|>user\nWrite a CUDA kernel that adds two vectors of 4096 floats, and explain "
            "the launch configuration.<|im_end|>\n<|im_start|>assistant\n__global__ void add(")
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        expected = reference(torch.tensor([ids])).logits[0].numpy()
    with tempfile.TemporaryDirectory() as tmp:
        converted = os.path.join(tmp, "hf")
        subprocess.run([KWB, "model", "convert", gguf_path, converted], check=True, capture_output=True)
        for label, path in (("GGUF", gguf_path), ("converted folder", converted)):
            out = os.path.join(tmp, "logits.f32")
            done = subprocess.run([KWB_MODEL, "logits", path, "--ids", ",".join(map(str, ids)), "--out", out],
                                  capture_output=True, text=True)
            if done.returncode != 0:
                raise SystemExit(f"FAIL: kwb-model logits ({label}): {done.stderr.strip()}")
            summary = json.loads(done.stdout)
            got = np.fromfile(out, dtype=np.float32).reshape(len(ids), -1)
            if got.shape != expected.shape:
                raise SystemExit(f"FAIL: {label}: logits of shape {got.shape}, expected {expected.shape}")
            worst = float(np.abs(got - expected).max())
            same_argmax = bool((got.argmax(-1) == expected.argmax(-1)).all())
            print(f"{label}: {summary['model']}; {len(ids)} positions, max difference {worst:.2e} "
                  f"(largest logit {np.abs(expected).max():.1f}), argmax identical: {same_argmax}; "
                  f"load {summary['load_seconds']:.2f} s, forward {summary['forward_seconds']:.3f} s")
            if worst > 1e-4 or not same_argmax:
                raise SystemExit(f"FAIL: {label}: logits differ from transformers' by {worst}")

    # Greedy generation through the cache: the same tokens as transformers' generate, and each
    # token's log-probability equal to log_softmax of transformers' score for it.
    with torch.no_grad():
        # The model's own generation settings (EOS ends it); passing eos_token_id=None makes
        # transformers 5 pick other tokens than its plain greedy search.
        produced = reference.generate(torch.tensor([ids]), max_new_tokens=24, do_sample=False,
                                      output_scores=True, return_dict_in_generate=True,
                                      pad_token_id=tokenizer.eos_token_id)
    expected_tokens = produced.sequences[0, len(ids):].tolist()
    expected_logprobs = [torch.log_softmax(score[0].float(), -1)[t].item()
                         for score, t in zip(produced.scores, expected_tokens)]
    done = subprocess.run([KWB_MODEL, "generate", gguf_path, "--ids", ",".join(map(str, ids)),
                           "--max-tokens", "24", "--stop-ids", str(tokenizer.eos_token_id)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"FAIL: kwb-model generate: {done.stderr.strip()}")
    g = json.loads(done.stdout)
    if g["tokens"] != expected_tokens:
        raise SystemExit(f"FAIL: greedy tokens differ:\n  transformers {expected_tokens}\n  kwb-model    {g['tokens']}")
    worst = max(abs(a - b) for a, b in zip(g["logprobs"], expected_logprobs))
    if worst > 1e-4:
        raise SystemExit(f"FAIL: log-probabilities differ by {worst}")
    # The cache changes nothing: a full forward pass over prompt + tokens picks the same ones.
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "full.f32")
        sequence = ids + g["tokens"][:-1]
        subprocess.run([KWB_MODEL, "logits", gguf_path, "--ids", ",".join(map(str, sequence)), "--out", out],
                       check=True, capture_output=True)
        full = np.fromfile(out, dtype=np.float32).reshape(len(sequence), -1)
        if full[len(ids) - 1:].argmax(-1).tolist() != g["tokens"]:
            raise SystemExit("FAIL: the cached generation differs from a full forward pass")
    print(f"generate: {len(expected_tokens)} greedy tokens identical to transformers' generate, log-probabilities within "
          f"{worst:.1e}; {g['tokens_per_second']:.1f} tokens/s decoding on this CPU ({g['stop_reason']})")
    # A stop token ends the generation, and sampling with a seed is repeatable.
    stop = expected_tokens[5]
    done = subprocess.run([KWB_MODEL, "generate", gguf_path, "--ids", ",".join(map(str, ids)), "--max-tokens", "24",
                           "--stop-ids", str(stop)], capture_output=True, text=True, check=True)
    g = json.loads(done.stdout)
    if g["stop_reason"] != "stop_token" or g["tokens"][-1] != stop or len(g["tokens"]) > 6:
        raise SystemExit(f"FAIL: the stop token did not end the generation: {g}")
    sampled = []
    for _ in range(2):
        done = subprocess.run([KWB_MODEL, "generate", gguf_path, "--ids", ",".join(map(str, ids)), "--max-tokens", "12",
                               "--temperature", "0.8", "--top-p", "0.9", "--top-k", "40", "--seed", "7"],
                              capture_output=True, text=True, check=True)
        sampled.append(json.loads(done.stdout)["tokens"])
    if sampled[0] != sampled[1] or len(sampled[0]) != 12:
        raise SystemExit(f"FAIL: seeded sampling is not repeatable: {sampled}")
    print("generate: a stop token ends it; seeded top-k/top-p sampling repeats")


if __name__ == "__main__":
    main()
