"""Ships a prebuilt library beside its kernels: code that no source check can read (the
candidate would load it at run time with a computed name)."""

import torch
import torch.nn as nn

import cuda_extension


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(dim))

    def forward(self, x, y):
        return cuda_extension.scale_residual_sigmoid_forward(x, y, self.scale)
