#!/usr/bin/env python3
"""How much of the judge's clock an honest candidate leaves unexplained per timed batch in CPU
mode, idle and with the cores busy: the evidence behind PER_BATCH_ALLOWANCE_MS["cpu"] and the
batch-majority rule (resources/harness/kwb_harness/timing/external_clock.py).

    python3 bench/external_clock_cpu.py --kwb build/release/app/cli/kwb [--runs 5]

Evaluates the load_inline KernelBench pair of tests/engine (a C++ extension, honest) with the
CI's short timing settings, then again with one busy loop per core beside it, and prints a
Markdown table of the external-timing evidence of every run.
"""
import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile

REFERENCE = '''import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, factor):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(16))
        self.factor = factor

    def forward(self, x):
        return x * self.weight * self.factor

def get_inputs():
    return [torch.randn(8, 16)]

def get_init_inputs():
    return [2.0]
'''

CANDIDATE = '''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_source = """
#include <torch/extension.h>
torch::Tensor scale(torch::Tensor x, torch::Tensor w, double f) {
    auto out = torch::empty_like(x);
    auto xa = x.contiguous(); auto wa = w.contiguous();
    const float* xp = xa.data_ptr<float>(); const float* wp = wa.data_ptr<float>();
    float* op = out.data_ptr<float>();
    int64_t cols = w.numel();
    for (int64_t i = 0; i < x.numel(); ++i) op[i] = xp[i] * wp[i % cols] * static_cast<float>(f);
    return out;
}
"""
ext = load_inline(name="kwb_bench_pair_scale", cpp_sources=_source, functions=["scale"], verbose=False)

class ModelNew(nn.Module):
    def __init__(self, factor):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(16))
        self.factor = factor

    def forward(self, x):
        return ext.scale(x, self.weight, self.factor)
'''


def busy() -> None:
    while True:
        pass


def evaluate(kwb: str, folder: str, iterations: int) -> dict:
    proc = subprocess.run([kwb, "eval", os.path.join(folder, "ref.py"), "--candidate",
                           os.path.join(folder, "new.py"), "--device", "cpu", "--checks", "2",
                           "--iterations", str(iterations), "--max-rounds", "2", "--json"],
                          capture_output=True, text=True)
    try:
        record = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return {"error": proc.stderr[-300:]}
    external = record.get("integrity", {}).get("external_timing", {})
    return {"reward": record.get("reward"), "flags": [f["code"] for f in record.get("flags", [])],
            **external}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kwb", required=True)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="kwb-clock-bench-")
    with open(os.path.join(folder, "ref.py"), "w") as f:
        f.write(REFERENCE)
    with open(os.path.join(folder, "new.py"), "w") as f:
        f.write(CANDIDATE)
    print("| load | iterations | reward | flags | batches | over | wall ms | unexplained ms | "
          "per batch ms | allowed ms |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    per_batch = {"idle": [], "busy": []}
    for load in ("idle", "busy"):
        burners = []
        if load == "busy":
            burners = [multiprocessing.Process(target=busy, daemon=True) for _ in range(os.cpu_count() or 2)]
            for b in burners:
                b.start()
        try:
            for run in range(args.runs):
                iterations = 4 if run % 2 == 0 else 20
                e = evaluate(args.kwb, folder, iterations)
                if "error" in e:
                    print(f"| {load} | {iterations} | error: {e['error']!r} |")
                    continue
                batches = max(1, e.get("batches", 0))
                share = e.get("unexplained_ms", 0.0) / batches
                per_batch[load].append(share)
                print(f"| {load} | {iterations} | {e['reward']} | {' '.join(e['flags']) or '-'} | "
                      f"{e.get('batches')} | {e.get('inconsistent_batches')} | {e.get('wall_ms', 0):.2f} | "
                      f"{e.get('unexplained_ms', 0):.2f} | {share:.2f} | {e.get('allowed_ms', 0):.2f} |")
        finally:
            for b in burners:
                b.terminate()
    for load, shares in per_batch.items():
        if shares:
            print(f"\n{load}: unexplained per batch median {statistics.median(shares):.2f} ms, "
                  f"max {max(shares):.2f} ms over {len(shares)} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
