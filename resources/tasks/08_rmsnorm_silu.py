"""RMSNorm + SiLU gating

Normalizes x with RMSNorm over the last dimension (learnable weight, no bias), then
multiplies by SiLU(gate): rmsnorm(x) * gate * sigmoid(gate). This is the gated-norm
pattern found in several state-space and transformer blocks.

Category: fusion
"""

import torch
import torch.nn as nn

batch_size = 2048
hidden_size = 4096
eps = 1e-6


class Model(nn.Module):
    def __init__(self, hidden_size: int, eps: float):
        super().__init__()
        self.norm = nn.RMSNorm(hidden_size, eps=eps)

    def forward(self, x: torch.Tensor, gate: torch.Tensor) -> torch.Tensor:
        return self.norm(x) * torch.nn.functional.silu(gate)


def get_inputs():
    x = torch.randn(batch_size, hidden_size, dtype=torch.float32)
    gate = torch.randn(batch_size, hidden_size, dtype=torch.float32)
    return [x, gate]


def get_init_inputs():
    return [hidden_size, eps]
