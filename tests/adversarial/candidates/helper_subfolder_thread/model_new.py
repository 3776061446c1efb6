"""Honest-looking: the thread that does the work lives in a helper module in a sub-folder."""

import os
import sys

import torch
import torch.nn as nn

import cuda_extension

sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels", "impl"))
import deferred  # noqa: E402


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(dim))

    def forward(self, x, y):
        return deferred.launch(cuda_extension.scale_residual_sigmoid_forward, x, y, self.scale)
