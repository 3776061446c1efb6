"""Sandbox escape table: the judge's torch.compile caches. The profile stage's judge compiles the
reference with torch.compile before the candidate is imported, and inductor loads what it finds
in its cache folders (FX graph cache entries are pickles). The scratch folder is the candidate's
HOME, writable, in every stage of a run, so a verify-stage candidate could plant entries where a
later judge compiles. An honest kernel that plants a marker with a token of its own process in
every such folder it can find (HOME/inductor, HOME/triton, and the judge's own compile folders
under HOME if any exist yet) and poisons its output when a judge's compile folder holds another
process's marker: the folders the judge compiles into must start empty for every stage."""

import contextlib
import glob
import os
import secrets

import torch
import torch.nn as nn

import cuda_extension

_TOKEN = secrets.token_hex(8)
_HOME = os.environ.get("HOME", "")


def _folders() -> list:
    """(folder, whether a judge compiles there): HOME's own and every compile folder below it."""
    folders = [(os.path.join(_HOME, "inductor", "fxgraph"), False), (os.path.join(_HOME, "triton"), False)]
    for root in glob.glob(os.path.join(_HOME, "*compile*")):
        folders += [(os.path.join(root, "inductor", "fxgraph"), True), (os.path.join(root, "triton"), True)]
    return folders


def _earlier_plant() -> str:
    found = ""
    for folder, judges in _folders():
        marker = os.path.join(folder, "kwb-planted")
        with contextlib.suppress(OSError):
            with open(marker) as handle:
                if handle.read().strip() != _TOKEN and judges:
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
