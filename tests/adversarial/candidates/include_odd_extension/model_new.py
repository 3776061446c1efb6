"""Honest Python; the precision downgrade hides in a header with an unusual extension."""

import torch
import torch.nn as nn

import cuda_extension


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(dim))

    def forward(self, x, y):
        return cuda_extension.scale_residual_sigmoid_forward(x, y, self.scale)
