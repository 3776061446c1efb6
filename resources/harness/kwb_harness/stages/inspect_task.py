"""Stage ``inspect``: describes a task's inputs, outputs and parameters, and checks the
candidate's sources (without running them) when the request names one."""

import os

from .. import device as devices
from .. import models, values
from ..errors import TASK_IMPORT, HarnessError, describe_exception
from ..integrity.source_checks import check_sources
from ..task_loader import _import_file, check_reference
from ..values import flatten
from .preparation import Preparation


_DESCRIPTION_FIELDS = ("inputs", "init_inputs", "outputs", "parameters", "has_get_inputs", "has_get_init_inputs")


class InspectPreparation(Preparation):
    """The task's description: import, models, one reference run. Only the candidate's source
    checks wait for the request."""

    def __init__(self, req):
        super().__init__(req)
        self.description = {"inputs": [], "init_inputs": [], "outputs": [], "parameters": [],
                            "has_get_inputs": False, "has_get_init_inputs": False}
        self.module = None
        self.error = None
        try:
            self._describe(req)
        except HarnessError as exc:
            # Reported by the run, with what was described up to the failure.
            self.error = exc

    def _describe(self, req) -> None:
        d = self.description
        devices.configure(req.device, req.cpu_threads)
        devices.require(req.device)
        ws = req.workspace
        try:
            module = _import_file(req.reference, "reference")
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            raise HarnessError(TASK_IMPORT, describe_exception(exc, ws)) from None
        # Reported before the completeness check so the editor can show which one is missing.
        d["has_get_inputs"] = callable(getattr(module, "get_inputs", None))
        d["has_get_init_inputs"] = callable(getattr(module, "get_init_inputs", None))
        task = check_reference(module)
        self.phases.mark("load task")

        models.check_input_budget(task, req.input_budget_bytes)
        self.phases.mark("size inputs")
        seed = req.seed
        init = models.init_inputs(task, seed, ws)
        d["init_inputs"] = [values.describe(v) for v in init]
        model = models.reference_model(task, init, seed, req.device, ws)
        d["parameters"] = list(model.state_dict().keys())
        inputs = models.make_inputs(task, seed, req.device, ws)
        d["inputs"] = [values.describe(v) for v in inputs]
        output = models.run_model(model, inputs, req.device, "reference", ws)
        d["outputs"] = [values.describe(v) for v in flatten(output)]
        self.module = module
        self.phases.mark("reference run")


def prepare(req) -> InspectPreparation:
    return InspectPreparation(req)


def run(req, result: dict, prepared: InspectPreparation | None = None) -> None:
    result["flags"] = []
    if prepared is None:
        prepared = InspectPreparation(req)
    prepared.report_into(result)
    result.update({k: prepared.description[k] for k in _DESCRIPTION_FIELDS})
    if prepared.error is not None:
        raise prepared.error
    if req.candidate and os.path.isfile(req.candidate):
        # Source checks need the task's shapes and dtypes, which only exist once it ran.
        result["flags"] = check_sources(req.candidate, req.workspace, prepared.module, result["inputs"],
                                        named_only=req.pair_mode)
        for flag in result["flags"]:
            print(f"flag [{flag['severity']}] {flag['code']}: {flag['reason']}")
