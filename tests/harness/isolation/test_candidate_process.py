"""The judge's fork of the candidate's process: what it refuses before forking."""
import unittest
from unittest import mock

import torch

from kwb_harness.errors import INTERNAL, HarnessError
from kwb_harness.isolation import candidate_process


class ForkAfterCudaTest(unittest.TestCase):
    def test_a_judge_with_cuda_initialised_refuses_to_fork_as_its_own_failure(self):
        # The state a GPU host reaches when one process ran the compile stage and then verify.
        with mock.patch.object(torch.cuda, "is_initialized", return_value=True):
            with self.assertRaises(HarnessError) as raised:
                candidate_process.CandidateProcess()
        self.assertEqual(raised.exception.kind, INTERNAL)
        self.assertIn("CUDA was initialised in the judge's process", raised.exception.message)

    def test_a_judge_forked_from_a_cuda_process_refuses_too(self):
        # There torch reports CUDA uninitialised, and the GPU is still out of reach.
        with mock.patch.object(torch.cuda, "is_initialized", return_value=False), \
                mock.patch.object(torch.cuda, "_is_in_bad_fork", return_value=True):
            with self.assertRaises(HarnessError) as raised:
                candidate_process.CandidateProcess()
        self.assertEqual(raised.exception.kind, INTERNAL)

    def test_a_judge_without_cuda_forks_and_stops_its_candidate(self):
        self.assertFalse(torch.cuda.is_initialized())
        process = candidate_process.CandidateProcess()
        try:
            self.assertTrue(process.alive())
        finally:
            process.stop()
        self.assertFalse(process.alive())


if __name__ == "__main__":
    unittest.main()
