"""LayerNorm over the last dimension

nn.LayerNorm over the last dimension of a 2-D tensor, with learnable elementwise weight
and bias. Variance is the biased (population) variance, as in PyTorch.

Category: layernorm
"""

import torch
import torch.nn as nn

batch_size = 4096
hidden_size = 4096
eps = 1e-5


class Model(nn.Module):
    def __init__(self, hidden_size: int, eps: float):
        super().__init__()
        self.norm = nn.LayerNorm(hidden_size, eps=eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


def get_inputs():
    x = torch.randn(batch_size, hidden_size, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return [hidden_size, eps]
