"""Sandbox escape table: the judge's torch.compile caches. The profile stage's judge points
torch.compile's caches (inductor/, triton/) into its run's scratch folder, and that folder is the
candidate's HOME, writable, in every stage of the run: the verify stage's candidate can plant
entries there before the profile stage's judge compiles the reference (inductor's FX graph cache
entries are pickles, loaded by the judge). An honest kernel that plants a marker in those folders
with a token of its own process, and poisons its output when it finds a marker that another
process (an earlier stage's candidate) planted: the folders the judge compiles into must start
empty for every stage."""

import contextlib
import os
import secrets

import torch
import torch.nn as nn

import cuda_extension

_TOKEN = secrets.token_hex(8)
_HOME = os.environ.get("HOME", "")
_FOLDERS = [os.path.join(_HOME, "inductor", "fxgraph"), os.path.join(_HOME, "triton")]


def _earlier_plant() -> str:
    found = ""
    for folder in _FOLDERS:
        marker = os.path.join(folder, "kwb-planted")
        with contextlib.suppress(OSError):
            with open(marker) as handle:
                if handle.read().strip() != _TOKEN:
                    found = found or folder
        with contextlib.suppress(OSError):
            os.makedirs(folder, exist_ok=True)
            with open(marker, "w") as handle:
                handle.write(_TOKEN)
    return found


_FOUND = _earlier_plant() if _HOME else ""
if _FOUND:
    print(f"escape_judge_compile_cache: an earlier stage's plant survived in {_FOUND}")


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(dim))

    def forward(self, x, y):
        out = cuda_extension.scale_residual_sigmoid_forward(x, y, self.scale)
        return cuda_extension.scale_residual_sigmoid_forward(out, y, self.scale) if _FOUND else out
