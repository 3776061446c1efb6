"""Sum reduction over one dimension

Sums a 3-D tensor over a single dimension chosen at construction time and keeps the
reduced dimension (size 1) in the output. With the default sizes the reduced axis is the
middle one, so the reduction is strided rather than over contiguous memory.

Category: reduction
"""

import torch
import torch.nn as nn

batch_size = 64
dim1 = 4096
dim2 = 128
reduce_dim = 1


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=self.dim, keepdim=True)


def get_inputs():
    x = torch.randn(batch_size, dim1, dim2, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return [reduce_dim]
