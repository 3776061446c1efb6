"""The request's fields as the engine sends them: defaults, types, and what a wrong one says."""
import os
import tempfile
import unittest

from kwb_harness.errors import HarnessError
from kwb_harness.request import parse


class RequestTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.reference = os.path.join(self.dir, "reference.py")
        with open(self.reference, "w") as f:
            f.write("")

    def request(self, **fields):
        data = {"version": 1, "stage": "inspect", "device": "cpu", "reference": self.reference}
        data.update(fields)
        return parse(data, "inspect")

    def test_a_pair_is_named_as_such(self):
        self.assertFalse(self.request().pair_mode)
        self.assertTrue(self.request(pair_mode=True).pair_mode)
        self.assertFalse(self.request(pair_mode=False).pair_mode)
        # A workspace is whatever folder holds the files when the engine names none.
        self.assertEqual(self.request().workspace, self.dir)

    def test_the_head_start_is_none_unless_asked_for(self):
        self.assertEqual(self.request().head_start_us, 0.0)
        self.assertEqual(self.request(head_start_us=150).head_start_us, 150.0)

    def test_a_stage_uses_the_threads_the_engine_gave_it(self):
        import torch

        from kwb_harness import device as devices

        self.assertEqual(self.request().cpu_threads, 0)
        self.assertEqual(self.request(cpu_threads=3).cpu_threads, 3)
        before = torch.get_num_threads()
        outside = os.environ.get("KWB_CPU_THREADS")
        try:
            for device in ("cpu", "cuda"):
                torch.set_num_threads(4)
                devices.configure(device, self.request(cpu_threads=1).cpu_threads)
                self.assertEqual(torch.get_num_threads(), 1, device)
            # Without a share: the CPU's default from the environment, a GPU's left as it was.
            torch.set_num_threads(4)
            devices.configure("cuda", 0)
            self.assertEqual(torch.get_num_threads(), 4)
            os.environ["KWB_CPU_THREADS"] = "2"
            devices.configure("cpu", None)
            self.assertEqual(torch.get_num_threads(), 2)
        finally:
            if outside is None:
                os.environ.pop("KWB_CPU_THREADS", None)
            else:
                os.environ["KWB_CPU_THREADS"] = outside
            torch.set_num_threads(before)

    def test_wrong_types_are_the_callers_mistake(self):
        for field, value, words in (("pair_mode", "yes", "field 'pair_mode' must be bool"),
                                    ("pair_mode", 1, "field 'pair_mode' must be bool"),
                                    ("checks", True, "field 'checks' must be int, got bool"),
                                    ("cpu_threads", -2, "'cpu_threads' must not be negative"),
                                    ("cpu_threads", 1.5, "field 'cpu_threads' must be int"),
                                    ("device", "tpu", "must be 'cpu' or 'cuda'"),
                                    ("head_start_us", -1, "'head_start_us' must be 0 to 10000"),
                                    ("head_start_us", "100", "field 'head_start_us' must be float")):
            with self.assertRaises(HarnessError) as caught:
                self.request(**{field: value})
            self.assertIn(words, str(caught.exception))
            self.assertEqual(caught.exception.kind, "bad_request")


if __name__ == "__main__":
    unittest.main()
