"""Honest: helper function, contiguity and shape checks, an import guard that re-raises."""

import torch
import torch.nn as nn

try:
    import cuda_extension
except ImportError as error:
    raise RuntimeError('build the extension first') from error


def fused(x, y, scale):
    assert x.shape == y.shape and x.size(-1) == scale.numel()
    return cuda_extension.scale_residual_sigmoid_forward(x.contiguous(), y.contiguous(), scale.contiguous())


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(dim))

    def forward(self, x, y):
        return fused(x, y, self.scale)
