"""Runs one stage with output capture and turns every outcome into a result document.

Used by ``python -m kwb_harness`` and, in-process, by the workspace's utils/ shims.
"""

import time

from .capture import TeeCapture
from .environment import describe
from .errors import BAD_REQUEST, INTERNAL, HarnessError
from .request import load_json, parse
from .result import new_result, set_error


def _handler(stage: str):
    # Imported on demand: a bad request should not pay for importing torch-heavy modules,
    # and a broken stage module must not take the other stages down with it.
    if stage == "inspect":
        from .inspect_task import run
    elif stage == "compile":
        from .build import run
    elif stage == "verify":
        from .verify import run
    elif stage == "profile":
        from .profile import run
    elif stage == "baseline":
        from .profile import run as profile_run

        def run(req, result):
            profile_run(req, result, with_candidate=False)
    else:
        raise HarnessError(BAD_REQUEST, f"unknown stage '{stage}'")
    return run


def execute(stage: str, request: dict | str, capture: bool = True) -> dict:
    """``request`` is the parsed JSON object or the path of the request file."""
    started = time.perf_counter()
    result = new_result(stage)
    tee = TeeCapture() if capture else None
    log = ""
    device = "cpu"
    if tee is not None:
        tee.start()
    try:
        try:
            data = load_json(request) if isinstance(request, str) else request
            if isinstance(data, dict) and data.get("device") in ("cpu", "cuda"):
                device = data["device"]
            req = parse(data, stage)
            _handler(stage)(req, result)
            result["ok"] = True
        except HarnessError as exc:
            set_error(result, exc.kind, exc.message)
        except KeyboardInterrupt:
            set_error(result, INTERNAL, "interrupted")
        except BaseException as exc:  # SystemExit from user code included
            import traceback

            text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
            print(text)
            set_error(result, INTERNAL, f"harness failure: {type(exc).__name__}: {exc}\n{text[-3000:]}")
    finally:
        if tee is not None:
            log = tee.stop()
    try:
        # Described after the stage, which decides whether torch and CUDA get loaded.
        result["environment"] = describe(device)
    except Exception:
        pass
    result["log"] = log
    result["elapsed_s"] = time.perf_counter() - started
    return result
