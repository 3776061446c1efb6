"""The part of a stage that does not depend on the candidate, done before the request arrives.

Verify and profile spend most of their time before the candidate is even imported: the CUDA
context, the task import, the reference's outputs, the input pools, the profiler's start-up.
The warm worker's standby children (standby.py) do that work while the user is still typing;
the request then only imports and runs the candidate. Nothing of the candidate exists in the
process while a preparation is made, so the trust rules of a cold stage hold unchanged.

A preparation is used only for a request equal to the one it was prepared for in every field
but the candidate's, and only while the task file still has the same content; otherwise the
stage starts from scratch, as a cold stage would.
"""

import dataclasses
import hashlib
import json

from ..timing.phase_clock import PhaseClock

# Request fields a preparation does not depend on: the candidate's, the evaluation's own scratch
# folder (read when the request runs), what only decides when timing stops (the cached
# baselines' rounds, which arrive once they are cached), and the judge's torch threads (the
# engine's share of the cores when the request was made; applied when it runs, runner.py).
PER_REQUEST_FIELDS = ("candidate", "extension_path", "kernels_dir", "scratch_dir", "baseline_rounds",
                      "milestone_threshold", "cpu_threads")


def request_key(data: dict) -> str:
    """What a raw request must share with the one a standby was prepared for."""
    return json.dumps({k: v for k, v in data.items() if k not in PER_REQUEST_FIELDS}, sort_keys=True,
                      default=str)


def _fields(req) -> dict:
    return {k: v for k, v in dataclasses.asdict(req).items() if k not in PER_REQUEST_FIELDS}


def file_digest(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()
    except OSError:
        return None


class Preparation:
    """Base of the stages' preparations: remembers what it was prepared for and how long it took."""

    def __init__(self, req):
        self._fields = _fields(req)
        self._reference_digest = file_digest(req.reference)
        self.phases = PhaseClock()
        # Set by the standby child when the preparation ran before the request arrived.
        self.ahead_of_request = False
        # Set by the standby child: how long the request waited for the preparation to finish.
        self.request_waited = None
        # The candidate's process (isolation/candidate_process.py), for stages that run one.
        self.candidate = None

    @property
    def reference_digest(self) -> str | None:
        """The SHA-256 of the task file when the preparation began."""
        return self._reference_digest

    def fits(self, req) -> bool:
        return _fields(req) == self._fields and file_digest(req.reference) == self._reference_digest

    def close(self) -> None:
        """Ends the candidate's process, if the preparation started one, and puts what it
        printed into the stage's log."""
        if self.candidate is None:
            return
        output = self.candidate.stop()
        self.candidate = None
        if output.strip():
            print("--- the candidate's process printed ---\n" + output.rstrip() + "\n--- end ---")

    def report_into(self, result: dict) -> None:
        """Records in the result where the stage's preparation time went and whether the
        request had to wait for it."""
        result["prepared"] = {"ahead_of_request": self.ahead_of_request,
                              "seconds": sum(self.phases.seconds.values()),
                              "phase_seconds": dict(self.phases.seconds)}
        if self.request_waited is not None:
            result["prepared"]["request_waited_seconds"] = self.request_waited
        if self.ahead_of_request:
            waited = ("" if self.request_waited is None
                      else f"; the request waited {self.request_waited:.2f}s for it")
            print("prepared before the request: "
                  + ", ".join(f"{k} {v:.2f}s" for k, v in self.phases.seconds.items()) + waited)
