"""The profile stage's NVTX phase marks: no-ops on the CPU, balanced push/pop on the GPU, and
timeline flushes that never load or fail when no injection library is present."""

import os
import unittest
from unittest import mock

from kwb_harness.timing import phase_marks


class PhaseMarksTest(unittest.TestCase):
    def test_cpu_marks_do_nothing(self):
        marks = phase_marks.PhaseMarks("cpu")
        self.assertFalse(marks.enabled)
        with marks.range("eager"):
            pass

    def test_ranges_push_and_pop_even_when_the_body_raises(self):
        marks = phase_marks.PhaseMarks("cpu")
        calls = []
        marks._push = lambda name: calls.append(("push", name))
        marks._pop = lambda: calls.append(("pop",))
        self.assertTrue(marks.enabled)
        with marks.range("candidate"):
            with marks.range("iteration 0"):
                pass
        with self.assertRaises(ValueError):
            with marks.range("iteration 1"):
                raise ValueError("candidate failed")
        self.assertEqual(calls, [("push", "candidate"), ("push", "iteration 0"), ("pop",), ("pop",),
                                 ("push", "iteration 1"), ("pop",)])

    def test_flushes_are_no_ops_without_a_loaded_injection_library(self):
        with mock.patch.dict(os.environ, {}, clear=False):
            os.environ.pop("CUDA_INJECTION64_PATH", None)
            phase_marks.flush_timeline()
            phase_marks.finish_timeline()
        # Named but never injected: RTLD_NOLOAD finds nothing, and nothing is loaded.
        with mock.patch.dict(os.environ, {"CUDA_INJECTION64_PATH": "/nonexistent/libkwb_cupti_inject.so",
                                          "KWB_TIMELINE_OUT": "/nonexistent/records.jsonl"}):
            self.assertIsNone(phase_marks._injection_library())
            phase_marks.flush_timeline()
            phase_marks.finish_timeline()


if __name__ == "__main__":
    unittest.main()
