"""Honest kernel call, in a workspace that also holds modules named like the standard library's
(argparse, json, random, statistics, typing, inspect). Each of them ends the process when imported:
the harness, and every Python it starts, must import the real ones, so this candidate is judged
like any honest one."""

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
