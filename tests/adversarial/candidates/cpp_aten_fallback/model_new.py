"""Calls torch operators from C++ inside the extension (see kernels/cheat*.cpp)."""

import torch
import torch.nn as nn

import cuda_extension


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(dim))

    def forward(self, x, y):
        return cuda_extension.cheat_forward(x, y, self.scale)
