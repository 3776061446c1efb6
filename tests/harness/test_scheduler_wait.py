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
        for timing, waiting in ((busy, 0.0), (excused, 55.0)):
            for _ in range(2):
                timing.add(100.0, [20.0, 20.0], [20.0, 20.0], 0.0, waiting)
        self.assertIsNotNone(busy.flag())
        self.assertIsNone(excused.flag())
        self.assertAlmostEqual(excused.evidence()["scheduler_wait_ms"], 110.0)


if __name__ == "__main__":
    unittest.main()
