"""Sum over one dimension (keepdim) computed by a custom CUDA kernel."""

import torch
import torch.nn as nn

import cuda_extension


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return cuda_extension.sum_reduction_forward(x, self.dim)
