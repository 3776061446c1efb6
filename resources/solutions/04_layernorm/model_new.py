"""LayerNorm over the last dimension computed by a custom CUDA kernel."""

import torch
import torch.nn as nn

import cuda_extension


class ModelNew(nn.Module):
    def __init__(self, hidden_size: int, eps: float):
        super().__init__()
        # Kept as an nn.LayerNorm only so the parameter names match the reference model;
        # its forward is never called.
        self.norm = nn.LayerNorm(hidden_size, eps=eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return cuda_extension.layernorm_forward(x, self.norm.weight, self.norm.bias, self.norm.eps)
