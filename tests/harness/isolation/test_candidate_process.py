"""The judge's fork of the candidate's process: what it refuses before forking, and how it stops
everything the candidate started."""
import os
import signal
import time
import unittest
from unittest import mock

import torch

from kwb_harness.errors import INTERNAL, HarnessError
from kwb_harness.isolation import candidate_process, process_tree


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


class OrphanTest(unittest.TestCase):
    def test_the_judges_own_later_children_are_not_taken_for_the_candidates(self):
        import subprocess

        process = candidate_process.CandidateProcess()
        own = escaped = None
        try:
            for _ in range(200):  # the candidate's process makes its session as it starts
                if process_tree.session(process.pid) == process.pid:
                    break
                time.sleep(0.01)
            self.assertEqual(process_tree.session(process.pid), process.pid)
            process._judge_children_before_import = set(process_tree.children(os.getpid()))
            # A compiler the judge starts for a baseline stays in the judge's session; a process
            # of the candidate's that ended up the judge's child is in another one.
            own = subprocess.Popen(["sleep", "30"])
            escaped = subprocess.Popen(["sleep", "30"], start_new_session=True)
            self.assertEqual(process._orphans(), [escaped.pid])
        finally:
            for child in (own, escaped):
                if child is not None:
                    child.kill()
                    child.wait()
            process.stop()


def _chain(depth: int) -> None:
    """A process that starts the next one a millisecond after it starts, ``depth`` deep, and
    then spins: a tree that grows while it is being stopped."""
    if depth > 0 and os.fork() == 0:
        time.sleep(0.001)
        _chain(depth - 1)
    while True:
        pass


class StopTest(unittest.TestCase):
    def test_processes_started_while_the_tree_is_stopped_are_stopped_too(self):
        root = os.fork()
        if root == 0:
            try:
                _chain(12)
            finally:
                os._exit(0)
        try:
            # Part of the chain is there, the rest comes while it is stopped. Waited for, not
            # slept for: on a loaded machine the root may not have forked 3 ms after it started.
            deadline = time.monotonic() + 10.0
            while not process_tree.descendants(root) and time.monotonic() < deadline:
                time.sleep(0.0005)
            seen, running = process_tree.stop_until_still(
                lambda: [root] + process_tree.descendants(root), patience_s=5.0)
            tree = [root] + process_tree.descendants(root)
            self.assertEqual(running, [])
            self.assertGreater(len(tree), 1)
            self.assertTrue(set(tree) <= set(seen))
            self.assertEqual({process_tree.state(pid) for pid in tree}, {"T"})
        finally:
            process_tree.kill_tree(root)
            os.waitpid(root, 0)


if __name__ == "__main__":
    unittest.main()
