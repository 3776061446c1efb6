"""Conv2d + bias + ReLU computed by one shared-memory tiled CUDA kernel."""

import torch
import torch.nn as nn

import cuda_extension


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        # Kept as an nn.Conv2d only so the parameter names match the reference model;
        # its forward is never called. The kernel supports dilation 1 and groups 1 only.
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        stride_h, stride_w = self.conv.stride
        pad_h, pad_w = self.conv.padding
        return cuda_extension.conv2d_relu_forward(
            x, self.conv.weight, self.conv.bias, stride_h, stride_w, pad_h, pad_w
        )
