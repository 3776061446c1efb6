#!/usr/bin/env python3
"""Writes tiny.gguf, the GGUF reader's test file: a llama-style header, a byte-level BPE
tokenizer over the 256 byte symbols plus a few merges and two special tokens, one tensor of
each type the reader dequantizes (F32, F16, Q8_0, Q4_0, Q4_1) holding known values, and the
decoder's own weights (small seeded random F32 values, shapes as the header gives them), so the
file is a whole model the converter and the shape checks accept. Run with the task Python (gguf
and numpy) to regenerate: make_tiny_gguf.py OUT."""

import sys

import gguf
import numpy as np


def byte_symbols():
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    symbols, extra = {}, 256
    for b in range(256):
        if b in printable:
            symbols[b] = chr(b)
        else:
            symbols[b] = chr(extra)
            extra += 1
    return [symbols[b] for b in range(256)]


def main(out):
    w = gguf.GGUFWriter(out, arch="llama")
    w.add_name("tiny test model")
    w.add_block_count(2)
    w.add_context_length(64)
    w.add_embedding_length(32)
    w.add_feed_forward_length(64)
    w.add_head_count(4)
    w.add_head_count_kv(2)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-5)
    tokens = byte_symbols()
    merges = ["Ġ t", "h e", "Ġt he", "i n", "Ġ a"]
    tokens += ["Ġt", "he", "Ġthe", "in", "Ġa", "<|im_start|>", "<|im_end|>"]
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt2")
    w.add_token_list(tokens)
    w.add_token_types([1] * (len(tokens) - 2) + [3, 3])
    w.add_token_merges(merges)
    w.add_bos_token_id(len(tokens) - 2)
    w.add_eos_token_id(len(tokens) - 1)
    ramp = np.arange(64, dtype=np.float32) / 8.0 - 4.0  # -4.0 .. 3.875, exact in every type
    w.add_tensor("f32", ramp)
    w.add_tensor("f16", ramp.astype(np.float16))
    for name, qtype in (("q8_0", gguf.GGMLQuantizationType.Q8_0),
                        ("q4_0", gguf.GGMLQuantizationType.Q4_0),
                        ("q4_1", gguf.GGMLQuantizationType.Q4_1)):
        data = gguf.quants.quantize(ramp.reshape(2, 32), qtype)
        w.add_tensor(name, data, raw_dtype=qtype)
    # The decoder's weights, numpy's [out, in] (stored innermost first, as GGUF does).
    rng = np.random.default_rng(18)
    width, kv, ff = 32, 2 * (32 // 4), 64

    def weight(*shape):
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    w.add_tensor("token_embd.weight", weight(len(tokens), width))
    w.add_tensor("output_norm.weight", np.ones(width, dtype=np.float32))
    for layer in range(2):
        for name, shape in (("attn_norm", None), ("attn_q", (width, width)), ("attn_k", (kv, width)),
                            ("attn_v", (kv, width)), ("attn_output", (width, width)), ("ffn_norm", None),
                            ("ffn_gate", (ff, width)), ("ffn_up", (ff, width)), ("ffn_down", (width, ff))):
            values = np.ones(width, dtype=np.float32) if shape is None else weight(*shape)
            w.add_tensor(f"blk.{layer}.{name}.weight", values)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    # The values a reader must produce: gguf's own dequantization.
    for name, qtype in (("q8_0", gguf.GGMLQuantizationType.Q8_0), ("q4_0", gguf.GGMLQuantizationType.Q4_0),
                        ("q4_1", gguf.GGMLQuantizationType.Q4_1)):
        data = gguf.quants.quantize(ramp.reshape(2, 32), qtype)
        print(name, gguf.quants.dequantize(data, qtype).reshape(-1)[:8].tolist())


if __name__ == "__main__":
    main(sys.argv[1])
