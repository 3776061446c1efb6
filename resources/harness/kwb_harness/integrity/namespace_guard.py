"""Detects a candidate that changed torch, the clock modules or the harness for everybody in
the process.

Rebinding ``torch.sigmoid`` changes what the *reference* computes when it runs after the
candidate was imported; calling ``torch.set_num_threads(1)`` or switching cuDNN off slows the
eager baseline timed in the same process. Rebinding the harness's own functions and methods
(the candidate's host: what runs the calls, keeps and sends outputs) lets code run where no
clock or guard looks, and so do process-wide hooks: a trace or profile function, a garbage
collector callback, a torch function mode left on the stack. The attributes of the watched
modules and classes, torch's global settings and the hooks are recorded before the candidate is
imported and compared after it ran. Names that did not exist before are ignored: torch creates
some lazily on first use.
"""

import gc
import importlib
import sys
import threading

_MODULES = ("torch", "torch.nn.functional", "torch.nn", "torch.linalg", "torch.fft", "torch.special",
            "torch.cuda", "torch.backends", "time", "math", "builtins", "operator",
            # What the host itself calls between a timed call and its reply (the output digest's
            # header, its hash, the channel's framing): work deferred into them runs off the clock.
            "json", "json.encoder", "hashlib", "struct", "pickle")
_CLASSES = ("torch.Tensor", "torch.nn.Module", "torch._C.TensorBase")

# Harness objects whose callables the candidate could swap on the instance (the host's trusted
# clock keeps the original perf_counter as an attribute); registered by their owners.
_watched_instances = []


def watch_instance(obj) -> None:
    _watched_instances.append(obj)


def _object(path: str):
    module_path, _, attr = path.rpartition(".")
    try:
        if not module_path:
            return importlib.import_module(path)
        return getattr(importlib.import_module(module_path), attr)
    except (ImportError, AttributeError):
        try:
            return importlib.import_module(path)
        except ImportError:
            return None


def _torch_own_wrapper(current, original) -> bool:
    """torch rewraps a few of its own functions when a subsystem loads (importing torch._dynamo
    wraps torch.manual_seed; compiling patches nn.Module.__init__): a function defined inside
    torch's package that wraps the original (``__wrapped__`` or a closure over it)."""
    import os

    import torch

    code = getattr(current, "__code__", None)
    torch_dir = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
    if code is None or not os.path.abspath(code.co_filename).startswith(torch_dir):
        return False
    if getattr(current, "__wrapped__", None) is original:
        return True
    cells = getattr(current, "__closure__", None) or ()
    for cell in cells:
        try:
            if cell.cell_contents is original:
                return True
        except ValueError:  # an empty cell
            continue
    return False


def _settings() -> dict:
    import torch

    readings = {
        "num_threads": torch.get_num_threads,
        "num_interop_threads": torch.get_num_interop_threads,
        "grad_enabled": torch.is_grad_enabled,
        "default_dtype": torch.get_default_dtype,
        "deterministic_algorithms": torch.are_deterministic_algorithms_enabled,
        "float32_matmul_precision": torch.get_float32_matmul_precision,
        "cudnn.enabled": lambda: torch.backends.cudnn.enabled,
        "cudnn.benchmark": lambda: torch.backends.cudnn.benchmark,
        "cudnn.deterministic": lambda: torch.backends.cudnn.deterministic,
        "cudnn.allow_tf32": lambda: torch.backends.cudnn.allow_tf32,
        "cuda.matmul.allow_tf32": lambda: torch.backends.cuda.matmul.allow_tf32,
        "cuda.matmul.allow_fp16_reduced_precision_reduction":
            lambda: torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
        "mkldnn.enabled": lambda: torch.backends.mkldnn.enabled,
    }
    values = {}
    for name, read in readings.items():
        try:
            values[name] = str(read())
        except Exception:
            values[name] = "?"
    return values


def _harness_holders() -> list:
    """(path, module or class) for every harness module loaded now and the classes it defines."""
    holders = []
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "kwb_harness" or name.startswith("kwb_harness.")):
            continue
        holders.append((name, module))
        for attr, value in list(vars(module).items()):
            if isinstance(value, type) and getattr(value, "__module__", None) == name:
                holders.append((f"{name}.{attr}", value))
    return holders


def _hooks() -> dict:
    """Process-wide places where code can be made to run later, outside the calls."""
    import torch

    readings = {
        "sys.settrace": lambda: sys.gettrace(),
        "sys.setprofile": lambda: sys.getprofile(),
        "threading.settrace": lambda: getattr(threading, "_trace_hook", None),
        "threading.setprofile": lambda: getattr(threading, "_profile_hook", None),
        "gc.callbacks": lambda: tuple(gc.callbacks),
        "sys.excepthook": lambda: sys.excepthook,
        "torch function modes": lambda: torch._C._len_torch_function_stack(),
    }
    found = {}
    for name, read in readings.items():
        try:
            found[name] = read()
        except Exception:
            found[name] = "?"
    return found


class NamespaceSnapshot:
    def __init__(self):
        self._ids = {}
        holders = [(path, _object(path)) for path in _MODULES + _CLASSES] + _harness_holders()
        holders += [(f"the harness's {type(obj).__name__}", obj) for obj in _watched_instances]
        for path, holder in holders:
            if holder is None:
                continue
            for name, value in list(vars(holder).items()):
                # Functions, classes and modules only: plain values (flags such as
                # torch.cuda._initialized) change in normal use; settings are read separately.
                if callable(value) or isinstance(value, type):
                    # A Python function can keep its identity and change what it runs: its code
                    # object is kept too.
                    self._ids[f"{path}.{name}"] = (holder, name, value, getattr(value, "__code__", None))
        self._settings = _settings()
        self._hooks = _hooks()

    def changes(self) -> tuple:
        """(rebound names, changed settings)."""
        rebound = []
        for key, (holder, name, original, code) in self._ids.items():
            current = vars(holder).get(name, None)
            if current is None and name not in vars(holder):
                rebound.append(key + " (deleted)")
            elif current is not original:
                if not _torch_own_wrapper(current, original):
                    rebound.append(key)
            elif code is not None and getattr(current, "__code__", None) is not code:
                rebound.append(key + " (its code replaced)")
        hooks = _hooks()
        rebound += [f"{name} (a hook)" for name, value in self._hooks.items() if hooks.get(name) != value]
        now = _settings()
        settings = [f"{k}: {self._settings[k]} -> {now[k]}" for k in self._settings if now.get(k) != self._settings[k]]
        return rebound, settings


def flags(snapshot: NamespaceSnapshot) -> list:
    rebound, settings = snapshot.changes()
    found = []
    if rebound:
        found.append({"code": "monkey_patching", "severity": "strict",
                      "reason": "the candidate rebound names of torch, the standard library or the harness, or set "
                                "a process-wide hook: "
                                + ", ".join(sorted(rebound)[:8]) + (" ..." if len(rebound) > 8 else "")})
    if settings:
        found.append({"code": "torch_settings_changed", "severity": "strict",
                      "reason": "the candidate changed torch's global settings, which also affect the "
                                "reference and the baselines: " + "; ".join(settings)})
    return found
