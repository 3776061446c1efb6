"""Request construction shared by the workspace helpers."""

import argparse
import json
import os
import subprocess
import sys
import tempfile

from .kwb_harness.result import json_safe, new_result, set_error, write_result

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
    """Runs one stage in a Python process of its own, as kwb does. Never in this one: verify and
    profile fork the candidate's process before anything initialises CUDA, and a compile stage
    run here first (compile_first) would have initialised it, leaving the fork unable to use the
    GPU ("Cannot re-initialize CUDA in forked subprocess")."""
    build = os.path.join(WORKSPACE, "build")
    os.makedirs(build, exist_ok=True)
    # The result is kept for a closer look (full compiler output, per-output errors, timings).
    result_file = os.path.join(build, f"last_{stage}.json")
    fd, request_file = tempfile.mkstemp(prefix=f"request-{stage}-", suffix=".json", dir=build)
    with os.fdopen(fd, "w") as out:
        json.dump(data, out)
    try:
        os.unlink(result_file)
    except FileNotFoundError:
        pass
    sys.stdout.flush()
    try:
        code = subprocess.call([sys.executable, "-m", f"{__package__}.kwb_harness", stage, "--no-capture",
                                "--request", request_file, "--result", result_file], cwd=WORKSPACE)
    finally:
        os.unlink(request_file)
    result = _read_result(result_file)
    if result is None:
        result = new_result(stage)
        set_error(result, "harness_failed", f"the {stage} stage wrote no result ({_exit_text(code)})")
        write_result(result_file, result)
    if getattr(args, "json", False):
        print(json.dumps(json_safe(result), indent=2))
    return result


def _read_result(path: str):
    try:
        with open(path, encoding="utf-8") as source:
            result = json.load(source)
    except (OSError, ValueError):
        return None
    return result if isinstance(result, dict) and "ok" in result else None


def _exit_text(code: int) -> str:
    return f"killed by signal {-code}" if code < 0 else f"exit status {code}"


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
