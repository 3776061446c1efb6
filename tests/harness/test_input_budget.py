"""A task too large for the machine is refused before anything is allocated (inspect's
check_input_budget), sized on the meta device; a task that cannot be sized so is left to the
memory limit. A reference that runs out of memory is not a task that cannot be judged: what else
held the memory decides it."""

import types
import unittest

import torch

from kwb_harness import models
from kwb_harness.errors import CANDIDATE_RUN, TASK_OUT_OF_MEMORY, TASK_RUN, TASK_TOO_LARGE, HarnessError


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


class OutOfMemoryTest(unittest.TestCase):
    def test_a_reference_out_of_memory_is_its_own_kind_other_failures_are_the_tasks(self):
        def oom():
            raise MemoryError("cannot allocate")

        def torch_oom():
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

        def broken():
            raise ValueError("shapes do not match")

        self.assertEqual(_kind(oom), TASK_OUT_OF_MEMORY)
        self.assertEqual(_kind(torch_oom), TASK_OUT_OF_MEMORY)
        self.assertEqual(_kind(broken), TASK_RUN)
        # The candidate's own failures keep their kind.
        self.assertEqual(_kind(oom, "candidate"), CANDIDATE_RUN)

    def test_get_inputs_out_of_memory_too(self):
        def get_inputs():
            raise MemoryError("cannot allocate")

        with self.assertRaises(HarnessError) as caught:
            models.make_inputs(task(get_inputs), 1, "cpu")
        self.assertEqual(caught.exception.kind, TASK_OUT_OF_MEMORY)
        self.assertIn("ran out of memory", caught.exception.message)


def _kind(forward, role="reference") -> str:
    try:
        models.run_model(lambda *args: forward(), [torch.zeros(2)], "cpu", role)
    except HarnessError as exc:
        return exc.kind
    raise AssertionError("no HarnessError")


if __name__ == "__main__":
    unittest.main()
