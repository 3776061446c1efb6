"""Stage ``inspect``: describes a task's inputs, outputs and parameters, and checks the
candidate's sources (without running them) when the request names one."""

import os

from . import device as devices
from . import models, values
from .compare import flatten
from .errors import TASK_IMPORT, HarnessError, describe_exception
from .source_checks import check_sources
from .task_loader import _import_file, check_reference


def run(req, result: dict) -> None:
    result.update(
        inputs=[],
        init_inputs=[],
        outputs=[],
        parameters=[],
        has_get_inputs=False,
        has_get_init_inputs=False,
        flags=[],
    )
    devices.configure(req.device)
    devices.require(req.device)
    ws = req.workspace
    try:
        module = _import_file(req.reference, "reference")
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        raise HarnessError(TASK_IMPORT, describe_exception(exc, ws)) from None
    # Reported before the completeness check so the editor can show which one is missing.
    result["has_get_inputs"] = callable(getattr(module, "get_inputs", None))
    result["has_get_init_inputs"] = callable(getattr(module, "get_init_inputs", None))
    task = check_reference(module)

    seed = req.seed
    init = models.init_inputs(task, seed, ws)
    result["init_inputs"] = [values.describe(v) for v in init]
    model = models.reference_model(task, init, seed, req.device, ws)
    result["parameters"] = list(model.state_dict().keys())
    inputs = models.make_inputs(task, seed, req.device, ws)
    result["inputs"] = [values.describe(v) for v in inputs]
    output = models.run_model(model, inputs, req.device, "reference", ws)
    result["outputs"] = [values.describe(v) for v in flatten(output)]
    if req.candidate and os.path.isfile(req.candidate):
        # Source checks need the task's shapes and dtypes, which only exist once it ran.
        result["flags"] = check_sources(req.candidate, ws, module, result["inputs"])
        for flag in result["flags"]:
            print(f"flag [{flag['severity']}] {flag['code']}: {flag['reason']}")
