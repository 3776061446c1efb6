"""A judge-timed round is timed again when its thread waited on a busy host (busy_host.py)."""
import os
import subprocess
import sys
import time
import unittest

from kwb_harness.timing import busy_host


def _spin(seconds: float) -> None:
    """CPU work on this thread for ``seconds`` of its own CPU time."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


class DisturbedTest(unittest.TestCase):
    def test_a_tick_of_waiting_is_an_idle_hosts_noise(self):
        self.assertFalse(busy_host.disturbed(0.1, 1.0))
        self.assertFalse(busy_host.disturbed(busy_host.FLOOR_MS, 0.5))

    def test_a_wait_beyond_its_share_of_the_measured_time_is_not(self):
        self.assertTrue(busy_host.disturbed(0.3, 1.0))
        self.assertFalse(busy_host.disturbed(4.0, 100.0))
        self.assertTrue(busy_host.disturbed(6.0, 100.0))


@unittest.skipUnless(hasattr(os, "sched_setaffinity") and os.path.exists("/proc/self/schedstat"),
                     "needs Linux's per-thread scheduler statistics")
class RoundWatchTest(unittest.TestCase):
    def setUp(self):
        self._affinity = os.sched_getaffinity(0)
        self._cpu = min(self._affinity)

    def tearDown(self):
        os.sched_setaffinity(0, self._affinity)

    def test_a_thread_sharing_its_cpu_with_another_process_waits(self):
        # Both on one CPU: the scheduler shares it, so each waits about as long as it runs.
        os.sched_setaffinity(0, {self._cpu})
        hog = subprocess.Popen([sys.executable, "-c", "while True: pass"],
                               preexec_fn=lambda: os.sched_setaffinity(0, {self._cpu}))
        try:
            time.sleep(0.05)  # the hog is running
            watch = busy_host.RoundWatch()
            _spin(0.2)
            waited = watch.stop()
        finally:
            hog.kill()
            hog.wait()
        self.assertGreater(waited, 50.0)
        self.assertTrue(busy_host.disturbed(waited, 200.0))

    def test_a_thread_alone_on_its_cpu_hardly_waits(self):
        watch = busy_host.RoundWatch()
        _spin(0.05)
        # Other tests may run beside this one on a CI machine: only the order of magnitude holds.
        self.assertLess(watch.stop(), 50.0)


class TimedRoundTest(unittest.TestCase):
    """The retry rule on rounds whose waits are given (RoundWatch replaced)."""

    def _with_waits(self, waits):
        original = busy_host.RoundWatch
        queue = list(waits)

        class GivenWait:
            def stop(self):
                return queue.pop(0)

        busy_host.RoundWatch = GivenWait
        self.addCleanup(setattr, busy_host, "RoundWatch", original)

    def test_an_undisturbed_round_runs_once(self):
        self._with_waits([0.0])
        runs = []
        kept = busy_host.timed_round(lambda: runs.append(1) or ([1.0] * 10, [1.1] * 10))
        self.assertEqual(len(runs), 1)
        self.assertEqual((kept.retimed, kept.disturbed), (0, False))

    def test_a_disturbed_round_is_timed_again_and_the_clean_one_kept(self):
        self._with_waits([3.0, 0.05])
        samples = iter([([2.0] * 10, [2.1] * 10), ([1.0] * 10, [1.1] * 10)])
        heard = []
        kept = busy_host.timed_round(lambda: next(samples), on_retry=lambda w, m: heard.append((w, m)))
        self.assertEqual(kept.devices_ms, [1.0] * 10)
        self.assertEqual((kept.retimed, kept.disturbed, kept.waited_ms), (1, False, 0.05))
        self.assertEqual(heard, [(3.0, 20.0)])

    def test_a_host_busy_throughout_keeps_the_last_round_marked(self):
        self._with_waits([3.0] * (busy_host.RETRIES + 1))
        runs = []
        kept = busy_host.timed_round(lambda: runs.append(1) or ([1.0] * 10, [1.1] * 10))
        self.assertEqual(len(runs), busy_host.RETRIES + 1)
        self.assertEqual((kept.retimed, kept.disturbed), (busy_host.RETRIES, True))


if __name__ == "__main__":
    unittest.main()
