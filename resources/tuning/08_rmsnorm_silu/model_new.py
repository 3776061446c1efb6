"""RMSNorm(x) * silu(gate) from the tuning template; the settings are the policy's action
({{action}})."""

import torch
import torch.nn as nn

import kwb_kernels

fused = kwb_kernels.load("rmsnorm_silu")

_THREADS = {{threads}}
_VEC = {{vec}}


class ModelNew(nn.Module):
    def __init__(self, hidden_size: int, eps: float):
        super().__init__()
        self.norm = nn.RMSNorm(hidden_size, eps=eps)

    def forward(self, x: torch.Tensor, gate: torch.Tensor) -> torch.Tensor:
        x, gate = x.contiguous(), gate.contiguous()
        weight = self.norm.weight.contiguous()
        y = torch.empty_like(x)
        cols = x.shape[-1]
        rows = x.numel() // cols if cols else 0
        if rows == 0:
            return y
        eps = self.norm.eps if self.norm.eps is not None else torch.finfo(x.dtype).eps
        kernel = fused.rmsnorm_silu_packed
        if cols % _VEC or any(t.storage_offset() % _VEC for t in (x, gate, weight)):
            kernel = fused.rmsnorm_silu_scalar
        kernel(grid=rows, block=_THREADS, args=(x, gate, weight, y, cols, float(eps)))
        return y
