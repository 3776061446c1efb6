"""Scaled residual add + sigmoid

Scales x by a learnable per-feature vector, adds a residual tensor y and applies a
sigmoid: sigmoid(x * scale + y). Two memory-bound operators that fuse into one pass.

Category: fusion
"""

import torch
import torch.nn as nn

batch_size = 4096
dim = 2048


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(dim))

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(x * self.scale + y)


def get_inputs():
    x = torch.randn(batch_size, dim, dtype=torch.float32)
    y = torch.randn(batch_size, dim, dtype=torch.float32)
    return [x, y]


def get_init_inputs():
    return [dim]
