"""Time a busy machine took from a batch, read from the kernel's per-thread accounting."""
import os
import time
import unittest

from kwb_harness.timing import scheduler_wait
from kwb_harness.timing.external_clock import ExternalTiming, Overhead
from kwb_harness.timing.scheduler_wait import Sample


class ExcusedTest(unittest.TestCase):
    def test_waiting_of_the_calling_thread_and_the_judge_is_excused(self):
        before = Sample(main_cpu=0, main_wait=0, others_cpu=0, process_cpu=0, judge_wait=0)
        after = Sample(main_cpu=5_000_000, main_wait=40_000_000, others_cpu=0, process_cpu=5_000_000,
                       judge_wait=3_000_000)
        self.assertAlmostEqual(scheduler_wait.excused_ms(before, after), 43.0)

    def test_work_on_other_threads_is_taken_off_the_excuse(self):
        before = Sample(0, 0, 0, 0, 0)
        # another thread of the candidate's computed for 30 ms while the calling thread waited 40
        live = Sample(main_cpu=1_000_000, main_wait=40_000_000, others_cpu=30_000_000, process_cpu=31_000_000,
                      judge_wait=0)
        self.assertAlmostEqual(scheduler_wait.excused_ms(before, live), 10.0)
        # the same work by a thread that ended: only the process's total shows it
        ended = Sample(main_cpu=1_000_000, main_wait=40_000_000, others_cpu=0, process_cpu=31_000_000,
                       judge_wait=0)
        self.assertAlmostEqual(scheduler_wait.excused_ms(before, ended), 10.0)

    def test_a_real_process_is_sampled(self):
        pid = os.fork()
        if pid == 0:
            end = time.monotonic() + 0.3
            while time.monotonic() < end:
                pass
            os._exit(0)
        try:
            first = scheduler_wait.sample(pid)
            time.sleep(0.2)
            second = scheduler_wait.sample(pid)
        finally:
            os.waitpid(pid, 0)
        self.assertGreater(second.main_cpu, first.main_cpu)
        self.assertGreaterEqual(second.main_wait, first.main_wait)
        self.assertGreaterEqual(scheduler_wait.excused_ms(first, second), 0.0)


class ExternalClockTest(unittest.TestCase):
    def test_waiting_time_is_not_unexplained(self):
        overhead = Overhead(0.0, 0.0)
        busy = ExternalTiming(overhead, "cpu")
        excused = ExternalTiming(overhead, "cpu")
        # 60 ms of each batch outside the reported calls; the machine kept the candidate waiting
        # for 80 ms of the batch, 48 of them (the 60% outside the calls) outside.
        for timing, waiting in ((busy, 0.0), (excused, 80.0)):
            for _ in range(2):
                timing.add(100.0, [20.0, 20.0], [20.0, 20.0], 0.0, waiting)
        self.assertIsNotNone(busy.flag())
        self.assertIsNone(excused.flag())
        self.assertAlmostEqual(excused.evidence()["scheduler_wait_ms"], 160.0)
        self.assertAlmostEqual(excused.evidence()["scheduler_wait_excused_ms"], 96.0)


class OneThreadTest(unittest.TestCase):
    """The harness's work around the calls runs on one thread on the CPU, then the calls' own
    thread count is back (needs torch)."""

    def test_cpu_work_runs_on_one_thread_and_the_count_comes_back(self):
        import torch

        from kwb_harness import device

        before = torch.get_num_threads()
        torch.set_num_threads(2)
        try:
            with device.one_thread("cpu"):
                self.assertEqual(torch.get_num_threads(), 1)
            self.assertEqual(torch.get_num_threads(), 2)
            with self.assertRaises(RuntimeError):
                with device.one_thread("cpu"):
                    raise RuntimeError("the work failed")
            self.assertEqual(torch.get_num_threads(), 2)
            with device.one_thread("cuda"):
                self.assertEqual(torch.get_num_threads(), 2)
        finally:
            torch.set_num_threads(before)

    def test_the_judges_own_wait_counts_time_another_process_held_its_cpu(self):
        pid = os.fork()
        if pid == 0:  # both spin on one CPU: each waits about half the time
            code = 1
            try:
                os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
                rival = os.fork()
                if rival == 0:
                    end = time.monotonic() + 0.6
                    while time.monotonic() < end:
                        pass
                    os._exit(0)
                before = scheduler_wait.own_wait_ns()
                end = time.monotonic() + 0.4
                while time.monotonic() < end:
                    pass
                waited = scheduler_wait.own_wait_ns() - before
                os.waitpid(rival, 0)
                code = 0 if waited > 50_000_000 else 2
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        self.assertEqual(os.waitstatus_to_exitcode(status), 0)


if __name__ == "__main__":
    unittest.main()
