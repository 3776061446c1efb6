"""Softmax over the last dimension from the tuning template; the settings are the policy's
action ({{action}})."""

import torch
import torch.nn as nn

import kwb_kernels

softmax = kwb_kernels.load("softmax")

_THREADS = {{threads}}
_VEC = {{vec}}


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        cols = x.shape[-1]
        rows = x.numel() // cols if cols else 0
        if rows == 0:
            return y
        kernel = softmax.softmax_packed
        if cols % _VEC or x.storage_offset() % _VEC:
            kernel = softmax.softmax_scalar
        kernel(grid=rows, block=_THREADS, args=(x, y, cols))
        return y
