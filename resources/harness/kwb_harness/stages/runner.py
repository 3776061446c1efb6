"""Runs one stage with output capture and turns every outcome into a result document.

Used by ``python -m kwb_harness`` (which the workspace's utils/ scripts run too, a process per stage).
"""

import os
import time

from .. import device as devices
from ..environment import describe
from ..errors import BAD_REQUEST, INTERNAL, HarnessError
from ..request import load_json, parse
from ..result import new_result, set_error
from .capture import TeeCapture


# The stages whose candidate-free part can run ahead of the request (preparation.py); their
# run() takes a `prepared` argument.
_PREPARABLE = ("inspect", "verify", "profile")


def preparable(stage: str) -> bool:
    return stage in _PREPARABLE


def _preparing_module(stage: str):
    # Imported on demand: a bad request should not pay for importing torch-heavy modules,
    # and a broken stage module must not take the other stages down with it.
    if stage == "inspect":
        from . import inspect_task as module
    elif stage == "verify":
        from . import verify as module
    elif stage == "profile":
        from . import profile as module
    else:
        return None
    return module


def _handler(stage: str):
    module = _preparing_module(stage)
    if module is not None:
        return module.run
    if stage == "compile":
        from .build import run

        return run
    if stage == "screen":
        from .screen_task import run

        return run
    if stage == "similar":
        from .similar_tasks import run

        return run
    if stage == "baseline":
        from .profile import run as profile_run

        def run(req, result):
            profile_run(req, result, with_candidate=False)

        return run
    raise HarnessError(BAD_REQUEST, f"unknown stage '{stage}'")


def prepare(stage: str, data: dict):
    """The candidate-free part of ``stage`` for the request ``data``, made ahead of the request
    (preparation.py), or None when the stage has none or preparing failed: the stage then
    meets the same problem when it runs and reports it there."""
    module = _preparing_module(stage)
    if module is None:
        return None
    try:
        prepared = module.prepare(parse(data, stage))
    except Exception as exc:  # noqa: BLE001 - reported by the real run, with its context
        print(f"kwb_harness: preparing {stage} failed ({type(exc).__name__}: {exc}); it will run from scratch")
        return None
    prepared.ahead_of_request = True
    return prepared


def execute(stage: str, request: dict | str, capture: bool = True, prepared=None, forward: bool = True,
            consume_request: bool = False) -> dict:
    """``request`` is the parsed JSON object or the path of the request file; ``prepared`` a
    preparation from :func:`prepare`, used when it fits the request. ``consume_request`` deletes
    the request file once read: the candidate's process must not find out what the stage is.
    ``stage`` may be empty: the request's own "stage" field then names it."""
    started = time.perf_counter()
    result = new_result(stage)
    tee = TeeCapture(forward=forward) if capture else None
    log = ""
    device = "cpu"
    if tee is not None:
        tee.start()
    try:
        try:
            data = load_json(request) if isinstance(request, str) else request
            if consume_request and isinstance(request, str):
                try:
                    os.unlink(request)
                except OSError:
                    pass
            if not stage:
                stage = data.get("stage") if isinstance(data, dict) and isinstance(data.get("stage"), str) else ""
                result["stage"] = stage
            if isinstance(data, dict) and data.get("device") in ("cpu", "cuda"):
                device = data["device"]
            req = parse(data, stage)
            if prepared is not None and prepared.fits(req):
                # Prepared with the share of the cores of an earlier moment.
                devices.use_threads(req.cpu_threads)
                _handler(stage)(req, result, prepared=prepared)
            else:
                if prepared is not None:
                    print(f"the {stage} stage prepared in advance does not fit this request; starting afresh")
                    prepared.close()
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
        # Where a stage's wall time goes besides its phases (the instant loop's budget).
        print(f"stage time: {time.perf_counter() - started:.3f}s in the stage process")
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
