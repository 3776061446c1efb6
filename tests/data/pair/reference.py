"""Row-scaled tanh, a small task for CLI tests
Category: elementwise
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(features))

    def forward(self, x):
        return torch.tanh(x * self.scale)


def get_inputs():
    return [torch.randn(32, 64)]


def get_init_inputs():
    return [64]
