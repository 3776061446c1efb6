"""Stage ``inspect``: describes a task's inputs, outputs and parameters, and checks the
candidate's sources (without running them) when the request names one."""

import os

from .. import device as devices
from .. import models, values
from ..errors import TASK_IMPORT, HarnessError, describe_exception
from ..integrity.source_checks import check_sources
from ..task_loader import _import_file, check_reference
from ..values import flatten
from . import known_description, seed_independence
from .preparation import Preparation, file_digest


class InspectPreparation(Preparation):
    """The task's description: import, models, one reference run; or, given the description an
    earlier inspect made of the same reference (known_description.py), the import alone, on the
    CPU. Only the candidate's source checks wait for the request."""

    def __init__(self, req):
        super().__init__(req)
        self.description = {"inputs": [], "init_inputs": [], "outputs": [], "parameters": [],
                            "has_get_inputs": False, "has_get_init_inputs": False}
        self.module = None
        self.error = None
        self.reused = False
        # Why a description the engine offered is not used; the stage then describes nothing.
        self.declined = ""
        # True only for a description made here and found not to depend on the seed.
        self.seed_independent = False
        try:
            given, why_not = known_description.usable(req.reference_description, self.reference_digest)
            if why_not:
                # The engine offered the description because it found the reference unchanged,
                # and so started this stage without the GPU's lane. Describing afresh here would
                # build and run the reference on the GPU beside another evaluation's timed stage
                # (the file changed in between): the engine asks again, holding the lane.
                self.declined = why_not
                print(f"the reference's description from an earlier inspect is not used ({why_not}); "
                      "left for the engine to describe afresh")
            elif given is not None:
                self._reuse(req, given)
            else:
                self._describe(req)
        except HarnessError as exc:
            # Reported by the run, with what was described up to the failure.
            self.error = exc

    def _import(self, req):
        try:
            return _import_file(req.reference, "reference")
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            raise HarnessError(TASK_IMPORT, describe_exception(exc, req.workspace)) from None

    def _reuse(self, req, given: dict) -> None:
        # The run that made the description configured the device, sized the inputs against
        # this budget (it is in the engine's key) and ran the reference: none of that again,
        # and no CUDA. The source checks need the module.
        self.module = self._import(req)
        self.description.update(given)
        self.reused = True
        self.phases.mark("description reused")

    def _describe(self, req) -> None:
        d = self.description
        devices.configure(req.device, req.cpu_threads)
        devices.require(req.device)
        ws = req.workspace
        module = self._import(req)
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
        construction = seed_independence.GeneratorWatch(seed)
        model = models.reference_model(task, init, seed, req.device, ws)
        d["parameters"] = list(model.state_dict().keys())
        built_alike = construction.untouched()
        inputs = models.make_inputs(task, seed, req.device, ws)
        d["inputs"] = [values.describe(v) for v in inputs]
        forward = seed_independence.GeneratorWatch()
        output = models.run_model(model, inputs, req.device, "reference", ws)
        d["outputs"] = [values.describe(v) for v in flatten(output)]
        ran_alike = forward.untouched()
        self.module = module
        self.phases.mark("reference run")
        self.seed_independent = (built_alike and ran_alike and seed_independence.inputs_independent(
            task, seed, d["init_inputs"], d["inputs"]))
        self.phases.mark("seed check")


def prepare(req) -> InspectPreparation:
    return InspectPreparation(req)


def run(req, result: dict, prepared: InspectPreparation | None = None) -> None:
    result["flags"] = []
    if prepared is None:
        prepared = InspectPreparation(req)
    prepared.report_into(result)
    if prepared.declined:
        # Nothing described and nothing checked: this result is not the evaluation's inspect.
        result["reference_described"] = "declined"
        result["declined_because"] = prepared.declined
        return
    result.update({k: prepared.description[k] for k in known_description.FIELDS})
    result["reference_described"] = "reused" if prepared.reused else "run"
    # Whether the engine may keep the description for every seed (seed_independence.py).
    result["description_seed_independent"] = prepared.seed_independent
    # The bytes described, for the engine to keep the description under: named only when the
    # file is still what it was before the import.
    if prepared.reference_digest and file_digest(req.reference) == prepared.reference_digest:
        result["reference_digest"] = prepared.reference_digest
    if prepared.error is not None:
        raise prepared.error
    if req.candidate and os.path.isfile(req.candidate):
        # Source checks need the task's shapes and dtypes, which only exist once it ran.
        result["flags"] = check_sources(req.candidate, req.workspace, prepared.module, result["inputs"],
                                        named_only=req.pair_mode)
        for flag in result["flags"]:
            print(f"flag [{flag['severity']}] {flag['code']}: {flag['reason']}")
