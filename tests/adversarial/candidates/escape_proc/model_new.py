"""Sandbox escape table: /proc. An honest kernel that first reads every process it can see for
the engine outside the sandbox and for credentials in environments; it poisons its output when it
sees either."""

import contextlib
import os

import torch
import torch.nn as nn

import cuda_extension

# Processes that live outside the sandbox: the test binary, ctest, the kwb CLI and the GUI.
# (Process 1 is bubblewrap's own init inside the sandbox; its arguments name the bound folders.)
_OUTSIDE = (b"kwb_adversarial_tests", b"/ctest", b"app/cli/kwb\0", b"app/gui/kernel-workbench\0")


def _seen() -> str:
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        for what in ("cmdline", "environ"):
            with contextlib.suppress(OSError):
                with open(f"/proc/{entry}/{what}", "rb") as handle:
                    data = handle.read()
                if what == "cmdline" and any(marker in data for marker in _OUTSIDE):
                    return f"process {entry}: {data[:80]!r}"
                if what == "environ" and b"KWB_ESCAPE_CANARY" in data:
                    return f"the environment of process {entry}"
    return ""


_SEEN = _seen()
if _SEEN:
    print(f"escape_proc: saw {_SEEN}")


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(dim))

    def forward(self, x, y):
        out = cuda_extension.scale_residual_sigmoid_forward(x, y, self.scale)
        return cuda_extension.scale_residual_sigmoid_forward(out, y, self.scale) if _SEEN else out
