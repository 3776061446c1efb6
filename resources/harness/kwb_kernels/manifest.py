"""Reads the manifest the workbench writes next to each cubin (``<stem>.json``).

Format (version 1)::

    {"version": 1, "source": "kernels/gelu.cu", "arch": "sm_90", "cubin": "gelu.cubin",
     "kernels": [{"name": "gelu_kernel", "symbol": "gelu_kernel",
                  "params": [{"type": "u64"}, {"type": "u64"}, {"type": "s64"}]}]}

``name`` is what model_new.py uses (the demangled base name for C++ kernels), ``symbol`` the
entry name in the cubin. A by-value struct parameter has type ``"b8"`` and a ``size``.
"""

import json
import os

PARAM_SIZES = {"u8": 1, "s8": 1, "b8": 1, "u16": 2, "s16": 2, "b16": 2, "f16": 2,
               "u32": 4, "s32": 4, "b32": 4, "f32": 4, "u64": 8, "s64": 8, "b64": 8, "f64": 8}


class ManifestError(RuntimeError):
    pass


def read(directory: str, stem: str) -> dict:
    path = os.path.join(directory, stem + ".json")
    try:
        with open(path, "r", encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        raise ManifestError(
            f"kernels/{stem}.cu has no compiled module in {directory}: compile the workspace first "
            "(kwb eval, the Compile tool, or Save in the workbench)") from None
    except (OSError, ValueError) as exc:
        raise ManifestError(f"cannot read {path}: {exc}") from None
    if not isinstance(data, dict) or data.get("version") != 1 or not isinstance(data.get("kernels"), list):
        raise ManifestError(f"{path} is not a version-1 kernel manifest")
    for kernel in data["kernels"]:
        if not isinstance(kernel, dict) or not isinstance(kernel.get("name"), str) \
                or not isinstance(kernel.get("symbol"), str) or not isinstance(kernel.get("params"), list):
            raise ManifestError(f"{path}: malformed kernel entry {kernel!r}")
        for param in kernel["params"]:
            if not isinstance(param, dict) or param.get("type") not in PARAM_SIZES:
                raise ManifestError(f"{path}: kernel {kernel['name']}: unknown parameter {param!r}")
    return data
