"""Checks outputs of timed calls against the reference on the same inputs.

The verify stage proves the candidate right on its inputs; this proves that the calls whose
time is reported were right too. A candidate that returns a cached or stale answer during
timing (keyed on ``data_ptr()`` or ``id()``, or replaying a CUDA graph bound to old buffers)
fails here. Which calls get checked is decided by the judge after they ran
(isolation/remote_timing.py), so the candidate cannot know.
"""

from .. import models
from ..compare import compare


class TimedOutputCheck:
    def __init__(self, ref_model, req):
        self._ref_model = ref_model
        self._req = req
        self.checked = 0
        self.flag = None

    def check(self, output, inputs_snapshot: list) -> None:
        req = self._req
        expected = models.run_model(self._ref_model, inputs_snapshot, req.device, "reference", req.workspace)
        comparison = compare(output, expected, req.atol, req.rtol, req.dtype_tolerances)
        self.checked += 1
        if not comparison.ok and self.flag is None:
            self.flag = {
                "code": "stale_output",
                "severity": "strict",
                "reason": "an output returned during timing does not match the reference on the same "
                          "inputs (cached or stale results?): " + comparison.message,
            }
            print("flag [strict] stale_output: " + comparison.message)
