"""Versions of the software the measurement ran on, for the result's environment block."""

import importlib.util
import os
import platform
import re
import sys


def torch_build_info() -> tuple:
    """(torch version, CUDA version or "") without importing torch if it is not loaded yet.

    Importing torch takes seconds; a compile stage that hits the cache needs only these
    two strings, which torch/version.py holds verbatim.
    """
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "__version__"):
        return str(torch.__version__), torch.version.cuda or ""
    try:
        spec = importlib.util.find_spec("torch")
        folder = os.path.dirname(spec.origin)
        with open(os.path.join(folder, "version.py"), encoding="utf-8") as handle:
            text = handle.read()
        version = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", text, re.M)
        cuda = re.search(r"^cuda\s*(?::[^=]*)?=\s*['\"]([^'\"]+)['\"]", text, re.M)
        if version:
            return version.group(1), cuda.group(1) if cuda else ""
    except Exception:
        pass
    import torch

    return str(torch.__version__), torch.version.cuda or ""


def describe(device: str) -> dict:
    version, cuda = torch_build_info()
    env = {
        "python": platform.python_version(),
        "torch": version,
        "cuda": cuda,
        "device_name": "cpu" if device == "cpu" else "",
        # The C++ side reads the driver version from NVML itself.
        "driver": "",
    }
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "get_num_threads"):
        # The stage's share of the cores (Request.cpu_threads), as it ran.
        env["torch_threads"] = torch.get_num_threads()
    # Only named when the stage already initialised CUDA: initialising it just for the
    # name would cost a compile-stage cache hit a second or more.
    if device == "cuda" and torch is not None:
        try:
            if torch.cuda.is_initialized():
                env["device_name"] = torch.cuda.get_device_name(torch.cuda.current_device())
        except Exception:
            pass
    return env
