"""RMSNorm followed by SiLU gating, fused into one CUDA kernel."""

import torch
import torch.nn as nn

import cuda_extension


class ModelNew(nn.Module):
    def __init__(self, hidden_size: int, eps: float):
        super().__init__()
        # Kept as an nn.RMSNorm only so the parameter names match the reference model;
        # its forward is never called.
        self.norm = nn.RMSNorm(hidden_size, eps=eps)

    def forward(self, x: torch.Tensor, gate: torch.Tensor) -> torch.Tensor:
        # nn.RMSNorm treats eps=None as "machine epsilon of the input dtype".
        eps = self.norm.eps if self.norm.eps is not None else torch.finfo(x.dtype).eps
        return cuda_extension.rmsnorm_silu_forward(x, gate, self.norm.weight, eps)
