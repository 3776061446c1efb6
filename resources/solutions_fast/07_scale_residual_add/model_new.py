"""sigmoid(x * scale + y) in one NVRTC-compiled kernel (fast-path flavour)."""

import torch
import torch.nn as nn

import kwb_kernels

fused = kwb_kernels.load("scale_residual")


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(dim))

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        x, y = x.contiguous(), y.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        blocks = max(1, min(65535, (n + 255) // 256))
        fused.scale_residual_sigmoid(grid=blocks, block=256,
                                     args=(x, y, self.scale, out, n, self.scale.numel()))
        return out
