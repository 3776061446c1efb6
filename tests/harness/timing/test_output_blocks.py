"""A batch that keeps its outputs gets them from blocks reserved before it, not from cudaMalloc
inside the timed calls (GPU; exits 77, ctest's skip, without one)."""
import sys
import unittest

import torch

from kwb_harness.timing import output_blocks


def malloc_calls() -> int:
    return torch.cuda.memory_stats().get("segment.all.allocated", 0)


class OutputBlocksTest(unittest.TestCase):
    def keep_outputs(self, calls: int, x) -> int:
        """Calls that keep every output, as the candidate's batch does; the cudaMallocs they cost."""
        before = malloc_calls()
        kept = [x + 1 for _ in range(calls)]
        torch.cuda.synchronize()
        del kept
        return malloc_calls() - before

    def test_reserved_blocks_serve_a_batch_that_keeps_its_outputs(self):
        torch.cuda.empty_cache()
        x = torch.randn(2048, 2048, device="cuda")  # 16 MiB outputs
        one = [x.numel() * x.element_size()]
        self.assertGreater(self.keep_outputs(8, x), 0)  # without: the allocator grows in the batch
        torch.cuda.empty_cache()
        self.assertEqual(output_blocks.reserve("cuda", one, 16), 16 * one[0])
        self.assertEqual(self.keep_outputs(16, x), 0)

    def test_nothing_to_reserve(self):
        self.assertEqual(output_blocks.reserve("cpu", [1 << 20], 4), 0)
        self.assertEqual(output_blocks.reserve("cuda", [], 4), 0)
        self.assertEqual(output_blocks.reserve("cuda", [0], 4), 0)
        self.assertEqual(output_blocks.reserve("cuda", [1 << 20], 0), 0)


if __name__ == "__main__":
    if not torch.cuda.is_available():
        print("SKIPPED: no CUDA device")
        sys.exit(77)
    unittest.main()
