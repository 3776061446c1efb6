"""sigmoid(x * scale + y) computed in a single fused CUDA kernel."""

import torch
import torch.nn as nn

import cuda_extension


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(dim))

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return cuda_extension.scale_residual_sigmoid_forward(x, y, self.scale)
