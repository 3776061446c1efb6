"""A task too large for the machine is refused before anything is allocated (inspect's
check_input_budget), sized on the meta device; a task that cannot be sized so is left to the
memory limit."""

import types
import unittest

import torch

from kwb_harness import models
from kwb_harness.errors import TASK_TOO_LARGE, HarnessError


def task(get_inputs, get_init_inputs=lambda: []):
    return types.SimpleNamespace(get_inputs=get_inputs, get_init_inputs=get_init_inputs)


class InputBudgetTest(unittest.TestCase):
    def test_inputs_over_the_budget_are_refused_with_their_size(self):
        huge = task(lambda: [torch.randn(1 << 28, 16)])  # 16 GiB, never allocated
        self.assertEqual(models.meta_input_bytes(huge), (1 << 32) * 4)
        with self.assertRaises(HarnessError) as caught:
            models.check_input_budget(huge, 4 << 30)
        self.assertEqual(caught.exception.kind, TASK_TOO_LARGE)
        self.assertIn("16.00 GiB", caught.exception.message)
        self.assertIn("4.00 GiB", caught.exception.message)

    def test_initial_inputs_count_and_a_task_within_the_budget_passes(self):
        init_heavy = task(lambda: [torch.randn(4)], lambda: [torch.zeros(1 << 20)])
        self.assertEqual(models.meta_input_bytes(init_heavy), 16 + (1 << 22))
        with self.assertRaises(HarnessError):
            models.check_input_budget(init_heavy, 1 << 20)
        models.check_input_budget(init_heavy, 8 << 20)

    def test_no_budget_and_unsizable_tasks_pass(self):
        huge = task(lambda: [torch.randn(1 << 28, 16)])
        models.check_input_budget(huge, 0)
        # Reads values: the meta device cannot run it, so it is not refused here.
        reads_values = task(lambda: [torch.randn(8, 8) * float(torch.randn(1).item())])
        self.assertIsNone(models.meta_input_bytes(reads_values))
        models.check_input_budget(reads_values, 1)


if __name__ == "__main__":
    unittest.main()
