"""An honest kernel that first looks everywhere a process can look for the name of the stage it
is in (its own and its parent's command line and environment, sys.argv, the files beside the
request). It poisons its output when it finds one, so a reward proves the name was invisible."""

import contextlib
import os
import sys

import torch
import torch.nn as nn

import cuda_extension

_STAGES = ("verify", "profile")


def _texts():
    yield " ".join(sys.argv)
    for pid in ("self", str(os.getppid())):
        for what in ("cmdline", "environ"):
            text = ""
            with contextlib.suppress(OSError):
                with open(f"/proc/{pid}/{what}", "rb") as handle:
                    text = handle.read().decode(errors="replace").replace("\0", " ")
            yield text
    yield " ".join(f"{k}={v}" for k, v in os.environ.items())
    for word in " ".join(sys.argv).split():
        folder = os.path.dirname(word)
        if folder and os.path.isdir(folder):
            names = []
            with contextlib.suppress(OSError):
                names = os.listdir(folder)
            yield " ".join(names)


def _stage_visible() -> str:
    for text in _texts():
        for stage in _STAGES:
            if stage in text:
                return stage
    return ""


_FOUND = _stage_visible()
if _FOUND:
    print(f"stage_name_probe: the stage name '{_FOUND}' is visible")


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(dim))

    def forward(self, x, y):
        out = cuda_extension.scale_residual_sigmoid_forward(x, y, self.scale)
        return cuda_extension.scale_residual_sigmoid_forward(out, y, self.scale) if _FOUND else out
