"""GELU (tanh approximation)

Applies GELU elementwise using the tanh approximation:
0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))).
The exact erf form is NOT used; solutions must match the tanh variant.

Category: elementwise
"""

import torch
import torch.nn as nn

batch_size = 4096
dim = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(x, approximate="tanh")


def get_inputs():
    x = torch.randn(batch_size, dim, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
