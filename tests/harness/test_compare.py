"""Output comparison: atol and rtol, KernelBench's tolerance per precision, and the same verdict
and figures whether a CPU tensor is compared whole or slice by slice."""
import math
import unittest

import torch

from kwb_harness import compare as compare_module
from kwb_harness.compare import compare
from kwb_harness.errors import NUMERICAL_MISMATCH

KERNELBENCH = {"float32": 1e-4, "float16": 1e-2, "bfloat16": 1e-2}


class CompareTest(unittest.TestCase):
    def test_an_fp32_precision_bug_passes_cuda_agents_tolerance_but_not_kernelbenchs(self):
        reference = torch.linspace(-2.0, 2.0, 1000)
        # A half-precision intermediate: errors around 1e-3, well inside 1e-2.
        candidate = reference.half().float()
        self.assertTrue(compare(candidate, reference, 1e-2, 1e-2).ok)
        strict = compare(candidate, reference, 1e-2, 1e-2, KERNELBENCH)
        self.assertEqual(strict.kind, NUMERICAL_MISMATCH)
        self.assertIn("atol=0.0001, rtol=0.0001", strict.message)

    def test_each_output_gets_the_tolerance_of_its_dtype(self):
        ref32 = torch.ones(64)
        ref16 = torch.ones(64, dtype=torch.float16)
        off = 5e-3  # inside fp16's 1e-2, outside fp32's 1e-4
        self.assertTrue(compare((ref32, ref16 + off), (ref32, ref16), 0.0, 0.0, KERNELBENCH).ok)
        result = compare((ref32 + off, ref16), (ref32, ref16), 1e-2, 1e-2, KERNELBENCH)
        self.assertEqual(result.kind, NUMERICAL_MISMATCH)
        self.assertIn("output 0", result.message)

    def test_dtypes_without_an_entry_keep_atol_and_rtol(self):
        ref = torch.ones(8, dtype=torch.float64)
        self.assertTrue(compare(ref + 5e-3, ref, 1e-2, 1e-2, KERNELBENCH).ok)
        self.assertFalse(compare(ref + 5e-2, ref, 1e-2, 1e-2, KERNELBENCH).ok)

    def test_slices_report_what_a_whole_tensor_comparison_reports(self):
        torch.manual_seed(3)
        reference = torch.randn(7, 1000)
        candidate = reference + torch.randn(7, 1000) * 1e-6
        candidate[5, 10] += 1.0  # the worst error, in a late slice
        candidate[2, 3] += 1.0 - 1e-3  # bad too, smaller, in an early slice
        candidate[6, 999] = math.nan  # a NaN on one side only, in the last slice
        reference[0, 0] = candidate[0, 0] = math.inf  # equal infinities are equal
        whole = self._message_and_stats(candidate, reference)
        saved = compare_module._CPU_SLICE
        try:
            for size in (7, 999, 1000, 4096):
                compare_module._CPU_SLICE = size
                self.assertEqual(self._message_and_stats(candidate, reference), whole, size)
                # A transposed (non-contiguous) pair is read in its own order.
                self.assertEqual(self._message_and_stats(candidate.t(), reference.t())[0],
                                 self._message_and_stats(candidate.t().contiguous(), reference.t().contiguous())[0])
        finally:
            compare_module._CPU_SLICE = saved
        self.assertIn("3 of 7000 elements", whole[0])
        self.assertIn("worst at [6, 999]", whole[0])  # the NaN: an infinite error

    @staticmethod
    def _message_and_stats(candidate, reference):
        result = compare(candidate, reference, 1e-2, 1e-2)
        return result.message, result.stats


if __name__ == "__main__":
    unittest.main()
