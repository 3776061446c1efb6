#!/usr/bin/env python3
"""Writes the rollout benchmark's task set, its candidates and the scripted model's turns:

    bench/rollout_tasks.py OUT [--small] [--only NAME,NAME]

- OUT/KernelBench/level1, level2: a KernelBench-style checkout (`<id>_<name>.py`) holding the
  eight bundled tasks (ids 101-108) and the honest KernelBench-style single-operator tasks of
  bench/kernelbench_pairs.py (elementwise, binary, row-wise; 24 of them).
- OUT/solutions/<file stem>/: each task's candidate in the CUDA-Agent layout (model_new.py,
  kernels/<op>.cu with a C launcher, kernels/<op>_binding.cpp, kernels/<op>_cpu.cpp for CPU mode).
  The bundled tasks use their bundled solutions; the others get the pair's CUDA kernel behind a
  launcher and a binding.
- OUT/script.json: turns for tests/agent/scripted_llm_server.py's by_task mode. Every episode
  writes its task's candidate, verifies, profiles, changes one line of the kernel, profiles
  again and stops (the final evaluation): four evaluations an episode.

--small shrinks the generated tasks' inputs for a CPU run.
"""

import argparse
import json
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernelbench_pairs as pairs  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUNDLED = {  # bundled task -> level (single operators 1, fusions 2)
    "01_gelu": 1, "02_sum_reduction": 1, "03_softmax": 1, "04_layernorm": 1,
    "05_gemm_bias_relu": 2, "06_conv2d_relu": 2, "07_scale_residual_add": 2, "08_rmsnorm_silu": 2,
}

CUDA_HEADER = """#include <cmath>
#include <cstdint>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
"""

UNARY_CU = CUDA_HEADER + """
__global__ void op_kernel(const float* __restrict__ x, float* __restrict__ out, int64_t n) {{
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) {{
        float v = x[i];
        out[i] = {expr};
    }}
}}

extern "C" void {op}_launch(const float* x, const float* /*y*/, float* out, int64_t rows, int64_t cols,
                            void* stream) {{
    const int64_t n = rows * cols;
    op_kernel<<<(n + 255) / 256, 256, 0, static_cast<cudaStream_t>(stream)>>>(x, out, n);
}}
"""

BINARY_CU = CUDA_HEADER + """
__global__ void op_kernel(const float* __restrict__ x, const float* __restrict__ y, float* __restrict__ out,
                          int64_t n) {{
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) {{
        float a = x[i], b = y[i];
        out[i] = {expr};
    }}
}}

extern "C" void {op}_launch(const float* x, const float* y, float* out, int64_t rows, int64_t cols,
                            void* stream) {{
    const int64_t n = rows * cols;
    op_kernel<<<(n + 255) / 256, 256, 0, static_cast<cudaStream_t>(stream)>>>(x, y, out, n);
}}
"""

# The pair's row kernel (a block-wide reduction in shared memory, one block per row) behind a C
# launcher instead of its torch entry point.
ROW_CU = CUDA_HEADER + pairs.ROWWISE_KERNEL.split("torch::Tensor run(")[0] + """
extern "C" void {op}_launch(const float* x, const float* /*y*/, float* out, int64_t rows, int64_t cols,
                            void* stream) {{
    row_kernel<<<(unsigned)rows, 256, 0, static_cast<cudaStream_t>(stream)>>>(x, out, (int)cols);
}}
"""

# CPU launchers (KWB_CPU_MODE): the same maths as plain loops, so a CPU run verifies them too.
CPU_HEADER = """#ifdef KWB_CPU_MODE
#include <algorithm>
#include <cmath>
#include <cstdint>
#define __expf(v) std::exp(v)
"""

UNARY_CPU = CPU_HEADER + """
extern "C" void {op}_launch(const float* x, const float* /*y*/, float* out, int64_t rows, int64_t cols,
                            void* /*stream*/) {{
    for (int64_t i = 0; i < rows * cols; ++i) {{
        float v = x[i];
        out[i] = {expr};
    }}
}}
#endif
"""

BINARY_CPU = CPU_HEADER + """
extern "C" void {op}_launch(const float* x, const float* y, float* out, int64_t rows, int64_t cols,
                            void* /*stream*/) {{
    for (int64_t i = 0; i < rows * cols; ++i) {{
        float a = x[i], b = y[i];
        out[i] = {expr};
    }}
}}
#endif
"""

ROW_CPU = CPU_HEADER + """
extern "C" void {op}_launch(const float* x, const float* /*y*/, float* out, int64_t rows, int64_t cols,
                            void* /*stream*/) {{
    for (int64_t r = 0; r < rows; ++r) {{
        const float* row = x + r * cols;
        float* o = out + r * cols;
        (void)o;
{body}
    }}
}}
#endif
"""

ROW_CPU_BODIES = {
    "sum": "        float s = 0.f; for (int64_t c = 0; c < cols; ++c) s += row[c]; out[r] = s;",
    "mean": "        float s = 0.f; for (int64_t c = 0; c < cols; ++c) s += row[c]; out[r] = s / cols;",
    "max": "        float m = -INFINITY; for (int64_t c = 0; c < cols; ++c) m = fmaxf(m, row[c]); out[r] = m;",
    "softmax": """        float m = -INFINITY; for (int64_t c = 0; c < cols; ++c) m = fmaxf(m, row[c]);
        float s = 0.f; for (int64_t c = 0; c < cols; ++c) s += std::exp(row[c] - m);
        for (int64_t c = 0; c < cols; ++c) o[c] = std::exp(row[c] - m) / s;""",
    "rms": """        float s = 0.f; for (int64_t c = 0; c < cols; ++c) s += row[c] * row[c];
        float scale = 1.f / std::sqrt(s / cols + 1e-6f);
        for (int64_t c = 0; c < cols; ++c) o[c] = row[c] * scale;""",
    "layernorm": """        float s = 0.f; for (int64_t c = 0; c < cols; ++c) s += row[c];
        float mean = s / cols, q = 0.f;
        for (int64_t c = 0; c < cols; ++c) q += (row[c] - mean) * (row[c] - mean);
        float inv = 1.f / std::sqrt(q / cols + 1e-5f);
        for (int64_t c = 0; c < cols; ++c) o[c] = (row[c] - mean) * inv;""",
}

BINDING = """// {op}: checks the float32 inputs, allocates the output and calls {op}_launch on torch's stream.

#include "../binding_registry.h"

#ifndef KWB_CPU_MODE
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#endif

extern "C" void {op}_launch(const float* x, const float* y, float* out, int64_t rows, int64_t cols,
                            void* stream);

static torch::Tensor {op}_forward({params}) {{
{checks}    const int64_t cols = x.size(x.dim() - 1), rows = x.numel() / (cols ? cols : 1);
    auto out = {allocate};
    if (x.numel() == 0)
        return out;
#ifdef KWB_CPU_MODE
    void* stream = nullptr;
#else
    const c10::cuda::CUDAGuard guard(x.device());
    void* stream = at::cuda::getCurrentCUDAStream().stream();
#endif
    {op}_launch(x.data_ptr<float>(), {y_pointer}, out.data_ptr<float>(), rows, cols, stream);
    return out;
}}

static void register_fn(pybind11::module& m) {{
    m.def("{op}_forward", &{op}_forward);
}}

REGISTER_BINDING({op}, register_fn);
"""

CHECK = """    TORCH_CHECK({t}.scalar_type() == torch::kFloat32 && {t}.is_contiguous(), "{t} must be contiguous float32");
"""

MODEL_NEW = '''"""{name}: one custom kernel (rollout benchmark candidate)."""

import torch.nn as nn

import cuda_extension


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, {args}):
        return cuda_extension.{op}_forward({call})
'''


def generated_tasks() -> list:
    """(name, level, reference maker, kind, expression or row kind) of the generated tasks."""
    tasks = [(name, 1, "unary", cuda) for name, (_, cuda) in pairs.UNARY.items()]
    tasks += [(name, 1, "binary", cuda) for name, (_, cuda) in pairs.BINARY.items()]
    tasks += [(name, 1, "row", kind) for name, (_, kind) in pairs.ROWWISE.items()]
    return tasks


def reference_source(name: str, small: bool) -> str:
    reference = pairs.pair_sources(name)[0]
    if small:
        for big in (f"{pairs.ROWS}, {pairs.COLS}", f"{pairs.RED_ROWS}, {pairs.RED_COLS}"):
            reference = reference.replace(f"torch.randn({big})", "torch.randn(64, 256)")
    return f'"""KernelBench-style task kb_{name} (rollout benchmark)."""\n\n' + reference


def candidate_files(name: str, kind: str, what: str) -> dict:
    op = re.sub(r"\W", "_", name)
    binary = kind == "binary"
    reduces = kind == "row" and what in ("sum", "mean", "max")
    files = {}
    if kind == "unary":
        files[f"kernels/{op}.cu"] = UNARY_CU.format(op=op, expr=what)
        files[f"kernels/{op}_cpu.cpp"] = UNARY_CPU.format(op=op, expr=what)
    elif binary:
        files[f"kernels/{op}.cu"] = BINARY_CU.format(op=op, expr=what)
        files[f"kernels/{op}_cpu.cpp"] = BINARY_CPU.format(op=op, expr=what)
    else:
        body = pairs.ROW_BODIES[what].replace("{eps}", "1e-5f")
        files[f"kernels/{op}.cu"] = ROW_CU.format(op=op, body=body)
        files[f"kernels/{op}_cpu.cpp"] = ROW_CPU.format(op=op, body=ROW_CPU_BODIES[what])
    params = "const torch::Tensor& x, const torch::Tensor& y" if binary else "const torch::Tensor& x"
    checks = CHECK.format(t="x") + (CHECK.format(t="y") if binary else "")
    allocate = ("torch::empty({rows}, x.options())" if reduces else "torch::empty_like(x)")
    files[f"kernels/{op}_binding.cpp"] = BINDING.format(
        op=op, params=params, checks=checks, allocate=allocate,
        y_pointer="y.data_ptr<float>()" if binary else "nullptr")
    files["model_new.py"] = MODEL_NEW.format(
        name=name, op=op, args="x, y" if binary else "x",
        call="x.contiguous(), y.contiguous()" if binary else "x.contiguous()")
    return files


def bundled_files(task: str) -> dict:
    folder = os.path.join(REPO, "resources", "solutions", task)
    files = {}
    for root, _, names in os.walk(folder):
        for file in sorted(names):
            path = os.path.join(root, file)
            with open(path) as f:
                files[os.path.relpath(path, folder)] = f.read()
    return files


def turns_for(files: dict) -> list:
    """An episode as an agent's goes: write the candidate, verify, profile, change one line of the
    kernel (an incremental rebuild), profile again, stop (the final evaluation): four evaluations."""
    writes = [{"id": f"call_w{i}", "name": "Write", "arguments": {"file_path": path, "content": text}}
              for i, (path, text) in enumerate(sorted(files.items()))]
    kernel = sorted(path for path in files if path.endswith(".cu"))[0]
    edited = files[kernel] + "// launch settings checked\n"
    return [{"text": "I will write the kernel, its binding and ModelNew.", "tool_calls": writes},
            {"text": "First, is it correct?", "tool_calls": [{"id": "call_v", "name": "Verify", "arguments": {}}]},
            {"text": "Now the timing.", "tool_calls": [{"id": "call_p1", "name": "Profile", "arguments": {}}]},
            {"text": "A small change to the kernel.",
             "tool_calls": [{"id": "call_e", "name": "Write", "arguments": {"file_path": kernel, "content": edited}}]},
            {"text": "And the timing again.", "tool_calls": [{"id": "call_p2", "name": "Profile", "arguments": {}}]},
            {"text": "The kernel is correct. Done."}]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--small", action="store_true", help="small inputs for the generated tasks")
    parser.add_argument("--only", default="", help="comma-separated task names (bundled or generated)")
    args = parser.parse_args()
    only = {n for n in args.only.split(",") if n}
    entries = []

    def emit(level: int, number: int, name: str, source: str, files: dict, match: str) -> None:
        stem = f"{number}_{name}"
        folder = os.path.join(args.out, "KernelBench", f"level{level}")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, stem + ".py"), "w") as f:
            f.write(source)
        solution = os.path.join(args.out, "solutions", stem)
        shutil.rmtree(solution, ignore_errors=True)
        for path, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(solution, path)), exist_ok=True)
            with open(os.path.join(solution, path), "w") as f:
                f.write(text)
        entries.append({"match": match, "task": f"level{level}/{stem}", "turns": turns_for(files)})

    for number, (task, level) in enumerate(BUNDLED.items(), start=101):
        if only and task not in only:
            continue
        with open(os.path.join(REPO, "resources", "tasks", task + ".py")) as f:
            source = f.read()
        first_line = source.lstrip('"').splitlines()[0]
        emit(level, number, task, source, bundled_files(task), re.escape(first_line))
    for number, (name, level, kind, what) in enumerate(generated_tasks(), start=1):
        if only and name not in only:
            continue
        emit(level, number, name, reference_source(name, args.small), candidate_files(name, kind, what),
             re.escape(f"task kb_{name} (rollout"))
    with open(os.path.join(args.out, "script.json"), "w") as f:
        json.dump({"by_task": entries}, f)
    print(f"{len(entries)} tasks in {os.path.join(args.out, 'KernelBench')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
