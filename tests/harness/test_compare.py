"""Output comparison: atol and rtol, and KernelBench's tolerance per precision."""
import unittest

import torch

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


if __name__ == "__main__":
    unittest.main()
