"""sigmoid(x * scale + y) from the tuning template; the settings are the policy's action
({{action}})."""

import torch
import torch.nn as nn

import kwb_kernels

fused = kwb_kernels.load("scale_residual")

_THREADS = {{threads}}
_VEC = {{vec}}
_UNROLL = {{unroll}}
_GRID = "{{grid}}"


def _blocks(work: int, per_block: int) -> int:
    needed = max(1, (work + per_block - 1) // per_block)
    if _GRID == "waves":
        sms = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
        return min(needed, 8 * sms)
    return min(needed, 2**31 - 1)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(dim))

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        x, y = x.contiguous(), y.contiguous()
        scale = self.scale.contiguous()
        out = torch.empty_like(x)
        n, dim = x.numel(), scale.numel()
        aligned = all(t.storage_offset() % _VEC == 0 for t in (x, y, scale))
        if aligned and dim % _VEC == 0:
            packs = n // _VEC
            fused.scale_residual_packed(grid=_blocks(packs, _THREADS * _UNROLL), block=_THREADS,
                                        args=(x, y, scale, out, packs, dim // _VEC))
        else:
            fused.scale_residual_scalar(grid=_blocks(n, 256), block=256,
                                        args=(x, y, scale, out, n, dim))
        return out
