"""Checks outputs of timed calls against the reference on the same inputs.

The verify stage proves the candidate right on its inputs; this proves that the calls whose
time is reported were right too. A candidate that returns a cached or stale answer during
timing (keyed on ``data_ptr()`` or ``id()``, or replaying a CUDA graph bound to old buffers)
fails here. Which calls get checked is decided by the judge after they ran
(isolation/remote_timing.py), so the candidate cannot know.
"""

from .. import models
from ..compare import compare
from .precision_floor import PrecisionFloor


class TimedOutputCheck:
    def __init__(self, ref_model, req):
        self._ref_model = ref_model
        self._req = req
        self.checked = 0
        self.flag = None  # the first strict finding
        self.precision_warning = None  # precision_reduced, which does not end the checking
        self.floor = PrecisionFloor(ref_model, req.device)

    def check(self, output, inputs_snapshot: list, precise: bool = False) -> None:
        """Compares one fetched output with the reference; with ``precise``, also holds it to
        float32's precision (the reference run again in float64: one such check per batch, on a
        call drawn after the batch ran, so a candidate that lowers its precision after the first
        few calls, or in any round, is held to it as often as at the start)."""
        req = self._req
        expected = models.run_model(self._ref_model, inputs_snapshot, req.device, "reference", req.workspace)
        comparison = compare(output, expected, req.atol, req.rtol, req.dtype_tolerances)
        self.checked += 1
        if comparison.ok and self.flag is None and precise:
            found = self.floor.flag_for(output, expected, inputs_snapshot)
            if found is not None and found["severity"] == "strict":
                self.flag = found
                print("flag [strict] precision_downgrade: " + found["reason"])
            elif found is not None and self.precision_warning is None:
                self.precision_warning = found
        if not comparison.ok and self.flag is None:
            self.flag = {
                "code": "stale_output",
                "severity": "strict",
                "reason": "an output returned during timing does not match the reference on the same "
                          "inputs (cached or stale results?): " + comparison.message,
            }
            print("flag [strict] stale_output: " + comparison.message)
