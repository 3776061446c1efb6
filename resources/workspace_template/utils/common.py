"""Request construction shared by the workspace helpers."""

import argparse
import json
import os
import sys

from .kwb_harness.result import json_safe, write_result
from .kwb_harness.stages.runner import execute

WORKSPACE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def default_device() -> str:
    forced = os.environ.get("KWB_DEVICE", "")
    if forced in ("cpu", "cuda"):
        return forced
    try:
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    except Exception:
        return "cpu"


def base_parser(description: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--device", choices=("cpu", "cuda"), default=None,
                        help="default: cuda when a GPU is visible, else cpu (env KWB_DEVICE overrides)")
    parser.add_argument("--arch", default="", help="GPU architecture such as sm_90 (default: detected)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--verbose", action="store_true", help="show the full compiler output")
    parser.add_argument("--json", action="store_true", help="also print the raw result JSON")
    return parser


def request(stage: str, args, **extra) -> dict:
    data = {
        "version": 1,
        "stage": stage,
        "workspace": WORKSPACE,
        "reference": os.path.join(WORKSPACE, "model.py"),
        "candidate": os.path.join(WORKSPACE, "model_new.py"),
        "device": args.device or default_device(),
        "seed": args.seed,
        "build_dir": os.path.join(WORKSPACE, "build"),
        # kwb's own rule (engine/system/user_directories.cpp), so both find the same builds.
        "cache_dir": os.environ.get("KWB_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache",
                                                                      "kernel-workbench"),
    }
    data.update(extra)
    return data


def run(stage: str, data: dict, args) -> dict:
    result = execute(stage, data, capture=False)
    # Kept for a closer look (full compiler output, per-output errors, all timings).
    write_result(os.path.join(WORKSPACE, "build", f"last_{stage}.json"), result)
    if getattr(args, "json", False):
        print(json.dumps(json_safe(result), indent=2))
    return result


def compile_first(args) -> tuple:
    """Builds (or fetches from cache) the extension; returns (ok, extension path or None, device)."""
    data = request("compile", args, arch=args.arch, extra_cflags=[], extra_cuda_cflags=[], verbose=args.verbose)
    result = run("compile", data, args)
    if not result["ok"]:
        print_compile_failure(result)
        return False, None, data["device"]
    return True, result.get("extension_path") or None, data["device"]


def print_compile_failure(result: dict) -> None:
    error = result.get("error") or {}
    print(f"COMPILE FAILED: {error.get('message', '')}")
    shown = 0
    for diag in result.get("diagnostics", []):
        if diag["severity"] == "error" and shown < 20:
            where = diag["file"] + (f":{diag['line']}" if diag["line"] else "") + (f":{diag['column']}" if diag["column"] else "")
            print(f"  {where}: {diag['severity']}: {diag['message']}")
            shown += 1
    if not shown and result.get("command_log"):
        print(result["command_log"][-4000:])


def print_error(result: dict) -> None:
    error = result.get("error") or {}
    print(f"[{error.get('kind', '?')}] {error.get('message', '')}")


def exit_with(ok: bool) -> None:
    sys.stdout.flush()
    sys.exit(0 if ok else 1)
