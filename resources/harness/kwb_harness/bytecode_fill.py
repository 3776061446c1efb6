"""Fills the engine's bytecode cache for one interpreter: ``python -I kwb_stage.py kwb_harness.bytecode_fill``.

Some installations ship no ``.pyc`` beside their sources (a container's site-packages installed
with PYTHONDONTWRITEBYTECODE, a read-only system image), and stages never write bytecode, so every
stage process compiled torch from source: 2.6 s for ``import torch`` alone on an H100 host whose
torch had no ``__pycache__``, before any of the modules the judge needs on first use.

The engine runs this module once per interpreter, with no candidate anywhere near it and the cache
folder (``KWB_BYTECODE_CACHE``, made ``sys.pycache_prefix`` by kwb_stage.py) as the only writable
path; stages then get that folder read-only. What is imported here is what the stages import at
start and on first use: torch, the harness's stage modules, the operator guard's first dispatch,
the profiler and the modules torch.compile and the extension builds load. Each import is
attempted on its own: a module this torch lacks is simply not cached.
"""

import importlib
import json
import os
import sys
import time

# What the stages import, besides torch itself. Names a torch build may lack are tried one by one.
_MODULES = (
    "kwb_harness.models",
    "kwb_harness.stages.inspect_task",
    "kwb_harness.stages.verify",
    "kwb_harness.stages.profile",
    "kwb_harness.stages.build",
    "kwb_harness.stages.screen_task",
    "kwb_harness.fork_server",
    "torch.profiler",
    "torch.utils.cpp_extension",
    "torch._dynamo",
    "torch._inductor.compile_fx",
    "torch._inductor.codegen.cpp",
    "torch._inductor.codegen.triton",
    "numpy",
)


def main() -> int:
    started = time.perf_counter()
    prefix = sys.pycache_prefix
    if not prefix or sys.dont_write_bytecode:
        print("bytecode_fill: no writable cache (KWB_BYTECODE_CACHE unset, or -B given)", file=sys.stderr)
        return 2
    os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
    try:
        import torch  # noqa: F401 - without it a cache would be nearly empty, and trusted as full
    except Exception as exc:  # noqa: BLE001
        print(f"bytecode_fill: torch does not import: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 3
    missing = []
    for name in _MODULES:
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - a module this installation lacks is skipped
            missing.append(f"{name}: {type(exc).__name__}")
    try:
        from .isolation import candidate_process

        candidate_process.warm_before_fork()  # the operator guard's first dispatch
    except Exception as exc:  # noqa: BLE001
        missing.append(f"operator guard warm-up: {type(exc).__name__}")
    print(json.dumps({"modules": len(sys.modules), "skipped": missing,
                      "seconds": round(time.perf_counter() - started, 3)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
