"""Row softmax

Softmax over the last dimension of a 2-D tensor (each row sums to one).

Category: softmax
"""

import torch
import torch.nn as nn

batch_size = 4096
dim = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_inputs():
    x = torch.randn(batch_size, dim, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
