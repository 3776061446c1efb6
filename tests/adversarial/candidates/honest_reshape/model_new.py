"""Honest: flattens leading dimensions with views and restores them."""

import torch
import torch.nn as nn

import cuda_extension


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(dim))

    def forward(self, x, y):
        rows = x.reshape(-1, x.shape[-1])
        out = cuda_extension.scale_residual_sigmoid_forward(rows, y.reshape(-1, y.shape[-1]), self.scale)
        return out.view(x.shape)
