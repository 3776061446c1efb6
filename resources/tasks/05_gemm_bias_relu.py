"""GEMM + bias + ReLU

A fully connected layer (x @ W^T + b, via nn.Linear) followed by ReLU. The bias add and
the activation are natural candidates for fusion into the GEMM epilogue.

Category: gemm-fusion
"""

import torch
import torch.nn as nn

batch_size = 1024
in_features = 2048
out_features = 2048


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x))


def get_inputs():
    x = torch.randn(batch_size, in_features, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return [in_features, out_features]
