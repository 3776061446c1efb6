"""Inspect given the reference's description from an earlier inspect (known_description.py): with
the reference file's digest it neither configures the device nor builds or runs the reference, and
the candidate's source checks still see the task's inputs; a description that is malformed or of
other bytes is declined, still without the device, for the engine to ask again holding the GPU's
lane (CPU)."""
import contextlib
import hashlib
import io
import json
import os
import shutil
import tempfile
import unittest
from unittest import mock

from kwb_harness import PROTOCOL_VERSION
from kwb_harness import device as devices
from kwb_harness.request import parse
from kwb_harness.stages import inspect_task
from kwb_harness.stages.standby import Standby

import noting_task

# The reference notes every Model built and every forward run (noting_task.py), in float32.
TASK = """import os
import torch
import torch.nn as nn
""" + noting_task.NOTES + "\n" + noting_task.MODEL + """

def get_inputs():
    return [torch.randn(4, 24)]

""" + noting_task.INIT

# Bakes the input's size in and halves the precision of a float32 task: both flags need the
# inputs' description.
CANDIDATE = '''import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, x):
        return x.reshape(24, -1).half()
'''


class InspectReuseTest(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="kwb-inspect-reuse-")
        self.reference = os.path.join(self.root, "model.py")
        self.candidate = os.path.join(self.root, "model_new.py")
        self.runs = os.path.join(self.root, "runs.txt")
        with open(self.reference, "w") as f:
            f.write(TASK)
        with open(self.candidate, "w") as f:
            f.write(CANDIDATE)
        self.data = {"version": PROTOCOL_VERSION, "stage": "inspect", "workspace": self.root,
                     "reference": self.reference, "candidate": self.candidate, "device": "cpu", "seed": 7,
                     "input_budget_bytes": 1 << 30, "cache_dir": os.path.join(self.root, "cache")}
        self.fresh = self.inspect(self.data)
        self.assertEqual(self.fresh["reference_described"], "run")
        self.assertEqual(self.reference_runs(), ["built", "ran"])
        os.unlink(self.runs)

    def tearDown(self):
        shutil.rmtree(self.root, ignore_errors=True)

    def reference_runs(self) -> list:
        if not os.path.exists(self.runs):
            return []
        with open(self.runs) as f:
            return f.read().split()

    def digest(self) -> str:
        with open(self.reference, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()

    def described(self, **changes) -> dict:
        """The request's reference_description as the engine sends it, from the fresh run."""
        given = {k: self.fresh[k] for k in inspect_task.known_description.FIELDS}
        given["digest"] = self.digest()
        given.update(changes)
        return given

    def inspect(self, data: dict) -> dict:
        result = {}
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            inspect_task.run(parse(data, "inspect"), result)
        result["printed"] = printed.getvalue()
        return result

    @staticmethod
    def flag_codes(result: dict) -> set:
        return {f["code"] for f in result["flags"]}

    def test_a_fresh_inspect_names_the_bytes_it_described(self):
        self.assertEqual(self.fresh["reference_digest"], self.digest())
        self.assertEqual(self.fresh["inputs"], [{"type": "tensor", "shape": [4, 24], "dtype": "float32"}])
        self.assertEqual(self.fresh["parameters"], ["scale"])
        self.assertTrue({"hardcoded_shape", "precision_downgrade"} <= self.flag_codes(self.fresh),
                        self.fresh["flags"])

    def test_a_matching_description_is_used_without_the_device_or_the_reference_run(self):
        refuse = mock.Mock(side_effect=AssertionError("the device was touched"))
        with mock.patch.object(devices, "configure", refuse), mock.patch.object(devices, "require", refuse):
            reused = self.inspect(dict(self.data, reference_description=self.described()))
        self.assertEqual(reused["reference_described"], "reused")
        self.assertEqual(self.reference_runs(), [], "the reference was built or run")
        for field in inspect_task.known_description.FIELDS:
            self.assertEqual(reused[field], self.fresh[field], field)
        self.assertIn("description reused", reused["prepared"]["phase_seconds"])
        # The source checks still see the task's shapes and dtypes.
        self.assertEqual(self.flag_codes(reused), self.flag_codes(self.fresh))
        self.assertTrue({"hardcoded_shape", "precision_downgrade"} <= self.flag_codes(reused))
        self.assertEqual(reused["reference_digest"], self.digest())

    def declined(self, given) -> dict:
        """Inspect offered `given`, with the device off limits: the engine started it without the
        GPU's lane."""
        refuse = mock.Mock(side_effect=AssertionError("the device was touched"))
        with mock.patch.object(devices, "configure", refuse), mock.patch.object(devices, "require", refuse):
            return self.inspect(dict(self.data, reference_description=given))

    def test_a_description_of_other_bytes_is_declined_without_the_device_or_the_reference_run(self):
        wrong = self.declined(self.described(digest="0" * 64))
        self.assertEqual(wrong["reference_described"], "declined")
        self.assertIn("digest is not the reference file's", wrong["declined_because"])
        self.assertEqual(self.reference_runs(), [], "the reference was built or run")
        self.assertNotIn("inputs", wrong, "nothing was described")
        self.assertEqual(wrong["flags"], [], "nothing was checked")
        # The reference edited after the engine looked its description up: the same.
        given = self.described()
        with open(self.reference, "w") as f:
            f.write(TASK.replace("torch.randn(4, 24)", "torch.randn(4, 48)").replace("ones(24)", "ones(48)"))
        edited = self.declined(given)
        self.assertEqual(edited["reference_described"], "declined")
        self.assertEqual(self.reference_runs(), [])
        # Asked again without the offer (the engine holds the lane then), the new shape is described.
        again = self.inspect(self.data)
        self.assertEqual(again["reference_described"], "run")
        self.assertEqual(self.reference_runs(), ["built", "ran"])
        self.assertEqual(again["inputs"][0]["shape"], [4, 48])
        self.assertEqual(again["reference_digest"], self.digest())

    def test_a_malformed_description_is_declined(self):
        malformed = {
            "text": "a description",
            "no inputs": {k: v for k, v in self.described().items() if k != "inputs"},
            "inputs of numbers": self.described(inputs=[4, 24]),
            "parameters of numbers": self.described(parameters=[1]),
            "a flag as text": self.described(has_get_inputs="yes"),
            "a digest as a number": self.described(digest=7),
        }
        for name, given in malformed.items():
            with self.subTest(name):
                result = self.declined(given)
                self.assertEqual(result["reference_described"], "declined")
                self.assertEqual(self.reference_runs(), [])
                self.assertIn("not used", result["printed"])
                self.assertTrue(result["declined_because"])

    def test_a_preparation_made_ahead_honours_the_description(self):
        data = dict(self.data, reference_description=self.described())
        prepared = inspect_task.prepare(parse(data, "inspect"))
        self.assertTrue(prepared.reused)
        self.assertEqual(self.reference_runs(), [])
        self.assertTrue(prepared.fits(parse(data, "inspect")))
        self.assertFalse(prepared.fits(parse(self.data, "inspect")), "a request without it")

        # A standby child of the warm worker, forked from such a request, prepares the same way.
        standby = Standby("inspect", data, None, [])
        request = os.path.join(self.root, "go-request.json")
        with open(request, "w") as f:
            json.dump(data, f)
        message = {"stage": "inspect", "request": request, "result": os.path.join(self.root, "go-result.json"),
                   "log": os.path.join(self.root, "go-log.txt")}
        self.assertTrue(standby.start(message))
        _, status = os.waitpid(standby.pid, 0)
        self.assertEqual(os.waitstatus_to_exitcode(status), 0)
        with open(message["result"]) as f:
            result = json.load(f)
        self.assertTrue(result["ok"], result.get("error"))
        self.assertTrue(result["prepared"]["ahead_of_request"])
        self.assertEqual(result["reference_described"], "reused")
        self.assertEqual(self.reference_runs(), [])
        self.assertEqual(self.flag_codes(result), self.flag_codes(self.fresh))


if __name__ == "__main__":
    unittest.main()
