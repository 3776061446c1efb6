#!/usr/bin/env python3
"""Writes KernelBench file pairs for the agreement benchmark: a reference `Model` and a
candidate `ModelNew` whose forward is one CUDA kernel built with load_inline, the way
KernelBench's own samples are written. Honest candidates compute what the reference does in
float32; the precision-bug candidates each carry one real bug of the kind a loose tolerance lets
through (a half-precision intermediate, a truncated mantissa, a wrong constant, a wrong epsilon)
or none lets through (a dropped tail, a half-precision accumulator).

    bench/kernelbench_pairs.py OUT_DIR            # writes OUT_DIR/<name>/{reference,candidate}.py
    bench/kernelbench_pairs.py OUT_DIR --list     # names and what each expects

Each pair folder also gets expect.json: {"bug": bool, "kind": ...}. Inputs are sized so that
one call is tens of microseconds to a few hundred on an H200 (16-64 MB per tensor).
"""

import argparse
import json
import os

ROWS, COLS = 4096, 4096  # elementwise: 16M floats, 64 MB per tensor
RED_ROWS, RED_COLS = 8192, 2048  # row-wise: one block per row

# name: (torch expression of x, CUDA expression of v)
UNARY = {
    "relu": ("torch.relu(x)", "fmaxf(v, 0.f)"),
    "sigmoid": ("torch.sigmoid(x)", "1.f / (1.f + expf(-v))"),
    "tanh": ("torch.tanh(x)", "tanhf(v)"),
    "gelu": ("F.gelu(x)", "0.5f * v * (1.f + erff(v * 0.70710678118654752f))"),
    "gelu_tanh": ("F.gelu(x, approximate='tanh')",
                  "0.5f * v * (1.f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)))"),
    "silu": ("F.silu(x)", "v / (1.f + expf(-v))"),
    "softplus": ("F.softplus(x)", "v > 20.f ? v : log1pf(expf(v))"),
    "hardtanh": ("F.hardtanh(x)", "fminf(fmaxf(v, -1.f), 1.f)"),
    "hardswish": ("F.hardswish(x)", "v * fminf(fmaxf(v + 3.f, 0.f), 6.f) / 6.f"),
    "selu": ("torch.selu(x)", "1.0507009873554805f * (v > 0.f ? v : 1.6732632423543772f * expm1f(v))"),
    "mish": ("F.mish(x)", "v * tanhf(v > 20.f ? v : log1pf(expf(v)))"),
    "exp": ("torch.exp(x)", "expf(v)"),
    # The fast intrinsic is a few ulp off: inside KernelBench's 1e-4, so an honest candidate.
    "exp_fast_intrinsic": ("torch.exp(x)", "__expf(v)"),
    "quick_gelu": ("x * torch.sigmoid(1.702 * x)", "v / (1.f + expf(-1.702f * v))"),
}

# name: (torch expression of x and y, CUDA expression of a and b)
BINARY = {
    "add": ("x + y", "a + b"),
    "mul": ("x * y", "a * b"),
    "maximum": ("torch.maximum(x, y)", "fmaxf(a, b)"),
    "scale_residual": ("x * 0.5 + y", "a * 0.5f + b"),
}

# Row-wise: name -> (torch expression of x, kind). kind picks the kernel below.
ROWWISE = {
    "sum_rows": ("torch.sum(x, dim=1)", "sum"),
    "mean_rows": ("torch.mean(x, dim=1)", "mean"),
    "max_rows": ("torch.amax(x, dim=1)", "max"),
    "softmax_rows": ("torch.softmax(x, dim=1)", "softmax"),
    "rms_norm_rows": ("x * torch.rsqrt(torch.mean(x * x, dim=1, keepdim=True) + 1e-6)", "rms"),
    "layer_norm_rows": ("F.layer_norm(x, (x.shape[1],))", "layernorm"),
}

# Precision bugs: name -> (reference expression, kernel body producing `out` from `v`, kind).
BUGS = {
    "bug_gelu_half_intermediate": (
        "F.gelu(x)",
        "float h = __half2float(__float2half(v));\n"
        "        float r = 0.5f * h * (1.f + erff(h * 0.70710678118654752f));",
        "half intermediate"),
    "bug_sigmoid_truncated_mantissa": (
        "torch.sigmoid(x)",
        "float r = 1.f / (1.f + expf(-v));\n"
        "        r = __int_as_float(__float_as_int(r) & 0xFFFFF000);",
        "truncated mantissa"),
    "bug_gelu_tanh_wrong_constant": (
        "F.gelu(x, approximate='tanh')",
        "float r = 0.5f * v * (1.f + tanhf(0.79f * (v + 0.044715f * v * v * v)));",
        "wrong constant"),
}

HEADER = '''import torch
import torch.nn as nn
import torch.nn.functional as F
'''

REFERENCE = HEADER + '''

class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, {args}):
        return {expr}


def get_inputs():
    return [{inputs}]


def get_init_inputs():
    return []
'''

CANDIDATE = HEADER + '''from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_fp16.h>
{kernel}
"""

cpp_source = "{declaration}"

module = load_inline(name="{module}", cpp_sources=cpp_source, cuda_sources=cuda_source,
                     functions=["run"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, {args}):
        return module.run({call})
'''

ELEMENTWISE_KERNEL = '''
__global__ void op_kernel(const float* __restrict__ x, float* __restrict__ out, long n) {{
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) {{
        float v = x[i];
        {body}
        out[i] = r;
    }}
}}

torch::Tensor run(torch::Tensor x) {{
    auto out = torch::empty_like(x);
    long n = x.numel();
    op_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), out.data_ptr<float>(), n);
    return out;
}}
'''

BINARY_KERNEL = '''
__global__ void op_kernel(const float* __restrict__ x, const float* __restrict__ y,
                          float* __restrict__ out, long n) {{
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) {{
        float a = x[i], b = y[i];
        out[i] = {expr};
    }}
}}

torch::Tensor run(torch::Tensor x, torch::Tensor y) {{
    auto out = torch::empty_like(x);
    long n = x.numel();
    op_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(),
                                        out.data_ptr<float>(), n);
    return out;
}}
'''

# One block of 256 threads per row: a block-wide sum or max in shared memory.
ROWWISE_KERNEL = '''
template <bool IsMax>
__device__ float block_reduce(float value, float* shared) {{
    shared[threadIdx.x] = value;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {{
        if (threadIdx.x < stride) {{
            float other = shared[threadIdx.x + stride];
            shared[threadIdx.x] = IsMax ? fmaxf(shared[threadIdx.x], other)
                                        : shared[threadIdx.x] + other;
        }}
        __syncthreads();
    }}
    float result = shared[0];
    __syncthreads();
    return result;
}}

__global__ void row_kernel(const float* __restrict__ x, float* __restrict__ out, int cols) {{
    __shared__ float shared[256];
    const float* row = x + (long)blockIdx.x * cols;
{body}
}}

torch::Tensor run(torch::Tensor x) {{
    const int rows = x.size(0), cols = x.size(1);
    auto out = {allocate};
    row_kernel<<<rows, 256>>>(x.data_ptr<float>(), out.data_ptr<float>(), cols);
    return out;
}}
'''

ROW_BODIES = {
    "sum": """    float acc = 0.f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) acc += row[c];
    acc = block_reduce<false>(acc, shared);
    if (threadIdx.x == 0) out[blockIdx.x] = acc;""",
    "mean": """    float acc = 0.f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) acc += row[c];
    acc = block_reduce<false>(acc, shared);
    if (threadIdx.x == 0) out[blockIdx.x] = acc / cols;""",
    "max": """    float acc = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) acc = fmaxf(acc, row[c]);
    acc = block_reduce<true>(acc, shared);
    if (threadIdx.x == 0) out[blockIdx.x] = acc;""",
    "softmax": """    float m = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, row[c]);
    m = block_reduce<true>(m, shared);
    float s = 0.f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) s += expf(row[c] - m);
    s = block_reduce<false>(s, shared);
    float* o = out + (long)blockIdx.x * cols;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) o[c] = expf(row[c] - m) / s;""",
    "rms": """    float s = 0.f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) s += row[c] * row[c];
    s = block_reduce<false>(s, shared);
    float scale = rsqrtf(s / cols + 1e-6f);
    float* o = out + (long)blockIdx.x * cols;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) o[c] = row[c] * scale;""",
    "layernorm": """    float s = 0.f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) s += row[c];
    float mean = block_reduce<false>(s, shared) / cols;
    float q = 0.f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) q += (row[c] - mean) * (row[c] - mean);
    float inv = rsqrtf(block_reduce<false>(q, shared) / cols + {eps});
    float* o = out + (long)blockIdx.x * cols;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) o[c] = (row[c] - mean) * inv;""",
    # A half-precision exponent: about three decimal digits.
    "softmax_half_exp": """    float m = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, row[c]);
    m = block_reduce<true>(m, shared);
    float s = 0.f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) s += __half2float(hexp(__float2half(row[c] - m)));
    s = block_reduce<false>(s, shared);
    float* o = out + (long)blockIdx.x * cols;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) o[c] = __half2float(hexp(__float2half(row[c] - m))) / s;""",
    # A half-precision accumulator: every addition rounds to 11 bits.
    "sum_half_accumulator": """    __half acc = __float2half(0.f);
    for (int c = threadIdx.x; c < cols; c += blockDim.x) acc = __hadd(acc, __float2half(row[c]));
    float total = block_reduce<false>(__half2float(acc), shared);
    if (threadIdx.x == 0) out[blockIdx.x] = total;""",
}

ROW_BUGS = {
    "bug_softmax_half_exp": ("torch.softmax(x, dim=1)", "softmax_half_exp", "half intermediate"),
    "bug_sum_half_accumulator": ("torch.sum(x, dim=1)", "sum_half_accumulator", "half accumulator"),
    "bug_layer_norm_wrong_eps": ("F.layer_norm(x, (x.shape[1],))", "layernorm_eps", "wrong epsilon"),
}

# Four floats at a time with no tail: the last n % 4 outputs stay zero.
TAIL_BUG_KERNEL = '''
__global__ void op_kernel(const float4* __restrict__ x, float4* __restrict__ out, long n4) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 v = x[i];
        out[i] = make_float4(fmaxf(v.x, 0.f), fmaxf(v.y, 0.f), fmaxf(v.z, 0.f), fmaxf(v.w, 0.f));
    }
}

torch::Tensor run(torch::Tensor x) {
    auto out = torch::zeros_like(x);
    long n4 = x.numel() / 4;
    op_kernel<<<(n4 + 255) / 256, 256>>>(reinterpret_cast<const float4*>(x.data_ptr<float>()),
                                         reinterpret_cast<float4*>(out.data_ptr<float>()), n4);
    return out;
}
'''


def pair_sources(name: str) -> tuple:
    """(reference source, candidate source, expectation) of one pair."""
    unary_inputs = f"torch.randn({ROWS}, {COLS})"
    row_inputs = f"torch.randn({RED_ROWS}, {RED_COLS})"
    module = "kwb_kb_" + name
    if name in UNARY or name in BUGS:
        if name in UNARY:
            expr, cuda = UNARY[name]
            body, expect = f"float r = {cuda};", {"bug": False}
        else:
            expr, body, kind = BUGS[name]
            expect = {"bug": True, "kind": kind}
        kernel = ELEMENTWISE_KERNEL.format(body=body)
        return (REFERENCE.format(args="x", expr=expr, inputs=unary_inputs),
                CANDIDATE.format(kernel=kernel, declaration="torch::Tensor run(torch::Tensor x);",
                                 module=module, args="x", call="x.contiguous()"), expect)
    if name in BINARY:
        expr, cuda = BINARY[name]
        kernel = BINARY_KERNEL.format(expr=cuda)
        return (REFERENCE.format(args="x, y", expr=expr, inputs=f"{unary_inputs}, {unary_inputs}"),
                CANDIDATE.format(kernel=kernel,
                                 declaration="torch::Tensor run(torch::Tensor x, torch::Tensor y);",
                                 module=module, args="x, y", call="x.contiguous(), y.contiguous()"),
                {"bug": False})
    if name in ROWWISE or name in ROW_BUGS:
        if name in ROWWISE:
            expr, kind = ROWWISE[name]
            expect = {"bug": False}
        else:
            expr, kind, bug_kind = ROW_BUGS[name]
            expect = {"bug": True, "kind": bug_kind}
        eps = "1e-5f"
        if kind == "layernorm_eps":
            kind, eps = "layernorm", "1e-3f"
        reduces = kind in ("sum", "mean", "max", "sum_half_accumulator")
        allocate = "torch::empty({rows}, x.options())" if reduces else "torch::empty_like(x)"
        body = ROW_BODIES[kind].replace("{eps}", eps)
        kernel = ROWWISE_KERNEL.format(body=body, allocate=allocate)
        return (REFERENCE.format(args="x", expr=expr, inputs=row_inputs),
                CANDIDATE.format(kernel=kernel, declaration="torch::Tensor run(torch::Tensor x);",
                                 module=module, args="x", call="x.contiguous()"), expect)
    if name == "bug_relu_dropped_tail":
        # The kernel writes whole float4s of the flat tensor: 4097 x 4095 elements leave
        # n % 4 == 3 of them never written (4096 rows would make n a multiple of 4, no tail).
        return (REFERENCE.format(args="x", expr="torch.relu(x)", inputs=f"torch.randn({ROWS + 1}, {COLS - 1})"),
                CANDIDATE.format(kernel=TAIL_BUG_KERNEL, declaration="torch::Tensor run(torch::Tensor x);",
                                 module=module, args="x", call="x.contiguous()"),
                {"bug": True, "kind": "dropped tail"})
    raise KeyError(name)


def all_names() -> list:
    return (list(UNARY) + list(BINARY) + list(ROWWISE) + list(BUGS) + list(ROW_BUGS)
            + ["bug_relu_dropped_tail"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args()
    for name in all_names():
        reference, candidate, expect = pair_sources(name)
        if args.list:
            print(name, json.dumps(expect))
            continue
        folder = os.path.join(args.out, name)
        os.makedirs(folder, exist_ok=True)
        for file, text in (("reference.py", reference), ("candidate.py", candidate),
                           ("expect.json", json.dumps(expect) + "\n")):
            with open(os.path.join(folder, file), "w") as f:
                f.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
