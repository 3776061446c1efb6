"""The judge's clock around the candidate's batches: what it subtracts, what it allows, and how it
tells reported times that are too short (every batch) from a busy host (one batch)."""

import unittest
from unittest import mock

from kwb_harness.timing import external_clock
from kwb_harness.timing.external_clock import ExternalTiming, Overhead


def _timing(device="cpu", round_trip=0.1, outside=0.01):
    overhead = Overhead(outside_ms=outside, empty_host_ms=0.001)
    overhead.round_trip_ms = round_trip
    return ExternalTiming(overhead, device)


def _honest_batch(timing, calls=8, call_ms=2.0, extra_ms=0.0):
    """A batch whose wall time is what the calls took plus the judge's known overheads."""
    o = timing.overhead
    wall = calls * (call_ms + o.outside_ms) + o.round_trip_ms + 0.05 + extra_ms
    timing.add(wall, [call_ms] * calls, [call_ms] * calls, input_ms=0.05)


class ExternalClockTest(unittest.TestCase):
    def test_honest_batches_are_consistent(self):
        timing = _timing()
        for _ in range(6):
            _honest_batch(timing)
        self.assertIsNone(timing.flag())
        evidence = timing.evidence()
        self.assertTrue(evidence["consistent"])
        self.assertEqual(evidence["batches"], 6)
        self.assertEqual(evidence["calls"], 48)
        self.assertAlmostEqual(evidence["unexplained_ms"], 0.0, places=6)

    def test_times_shrunk_in_every_batch_are_strict(self):
        timing = _timing()
        for _ in range(6):
            # The calls took 2 ms; the process reports a tenth of that.
            timing.add(8 * 2.01 + 0.15, [0.2] * 8, [0.2] * 8, input_ms=0.05)
        flag = timing.flag()
        self.assertEqual(flag["code"], "timing_mismatch")
        self.assertEqual(flag["severity"], "strict")
        self.assertIn("6 of the batches", flag["reason"])
        self.assertFalse(timing.evidence()["consistent"])

    def test_one_preempted_batch_is_a_warning_not_a_mismatch(self):
        timing = _timing()
        for index in range(6):
            # One batch lost 60 ms to another process: more than all the allowances together.
            _honest_batch(timing, extra_ms=60.0 if index == 2 else 0.0)
        self.assertGreater(timing.unexplained_ms(), timing.allowed_ms())
        self.assertEqual(timing.inconsistent_batches(), 1)
        flag = timing.flag()
        self.assertEqual(flag["code"], "timing_disturbed")
        self.assertEqual(flag["severity"], "warning")
        # Not consistent evidence either: it cannot confirm an implausible speed-up.
        self.assertFalse(timing.evidence()["consistent"])

    def test_half_the_batches_slow_is_a_busy_host(self):
        # CI's short timing has two batches: one preempted batch is half of them, not a lie.
        timing = _timing()
        _honest_batch(timing, extra_ms=60.0)
        _honest_batch(timing)
        self.assertEqual(timing.flag()["code"], "timing_disturbed")
        for _ in range(2):
            _honest_batch(timing, extra_ms=60.0)
        _honest_batch(timing)
        self.assertEqual(timing.inconsistent_batches(), 3)
        self.assertEqual(timing.flag()["code"], "timing_mismatch")  # 3 of 5: more than half

    def test_both_of_two_batches_short_is_strict(self):
        timing = _timing()
        for _ in range(2):
            timing.add(8 * 2.01 + 0.15, [0.2] * 8, [0.2] * 8, input_ms=0.05)
        self.assertEqual(timing.flag()["code"], "timing_mismatch")

    def test_a_single_slow_batch_is_all_the_evidence_there_is(self):
        timing = _timing()
        _honest_batch(timing, extra_ms=60.0)
        self.assertEqual(timing.flag()["code"], "timing_mismatch")

    def test_each_batch_has_an_allowance_for_its_request(self):
        # One-call batches of a tiny call: the request's own handling dominates.
        timing = _timing()
        allowance = external_clock.PER_BATCH_ALLOWANCE_MS["cpu"]
        for _ in range(4):
            _honest_batch(timing, calls=1, call_ms=0.05, extra_ms=0.8 * allowance)
        self.assertIsNone(timing.flag())
        timing = _timing()
        for _ in range(4):
            _honest_batch(timing, calls=1, call_ms=0.05, extra_ms=3 * allowance)
        self.assertEqual(timing.flag()["code"], "timing_mismatch")

    def test_device_time_beyond_host_time_is_strict(self):
        timing = _timing(device="cuda")
        timing.add(10.0, [5.0, 1.0], [1.0, 1.0], input_ms=0.0)
        flag = timing.flag()
        self.assertEqual(flag["code"], "timing_mismatch")
        self.assertIn("1 call(s)", flag["reason"])

    def test_on_the_cpu_device_times_other_than_the_host_times_are_strict(self):
        timing = _timing(device="cpu")
        timing.add(10.0, [1.0, 3.0, 3.0], [3.0, 3.0, 3.0], input_ms=0.0)  # a third of the first call
        flag = timing.flag()
        self.assertEqual(flag["code"], "timing_mismatch")
        self.assertIn("1 call(s)", flag["reason"])
        self.assertIn("same clock", flag["reason"])
        honest = _timing(device="cpu")
        _honest_batch(honest)
        self.assertIsNone(honest.flag())

    def test_digest_cost_is_explained(self):
        timing = _timing(device="cpu")
        timing.overhead.digest_ms = 1.5
        _honest_batch(timing, calls=8, call_ms=2.0, extra_ms=8 * 1.5)
        self.assertAlmostEqual(timing.unexplained_ms(), 0.0, places=6)
        self.assertIsNone(timing.flag())
        timing.overhead.digest_ms = 0.0
        self.assertAlmostEqual(timing.unexplained_ms(), 12.0, places=6)

    def test_waiting_for_a_cpu_is_excused_by_the_share_of_the_batch_outside_the_calls(self):
        timing = _timing(round_trip=0.0, outside=0.0)
        # 100 ms on the judge's clock, 60 of them reported calls; 20 ms of waiting for a CPU, of
        # which the 40% outside the calls (8 ms) explain the batch, the rest lie in the calls.
        timing.add(100.0, [60.0], [60.0], input_ms=0.0, waiting_ms=20.0)
        self.assertAlmostEqual(timing.evidence()["scheduler_wait_excused_ms"], 8.0, places=6)
        self.assertAlmostEqual(timing.unexplained_ms(), 32.0, places=6)

    def test_a_wait_inside_the_calls_does_not_hide_them_twice(self):
        timing = _timing(round_trip=0.0, outside=0.0)
        for _ in range(2):
            # The calls took 80 ms, 30 of them waiting for a CPU, and the process reports 50. With
            # the whole wait excused, 20 ms unexplained fit the allowance.
            timing.add(100.0, [25.0, 25.0], [25.0, 25.0], input_ms=0.0, waiting_ms=30.0)
        self.assertEqual(timing.inconsistent_batches(), 2)
        self.assertEqual(timing.flag()["code"], "timing_mismatch")

    def test_each_batch_is_described_part_by_part(self):
        timing = _timing(round_trip=0.0, outside=0.0)
        timing.overhead.digest_ms = 5.0
        timing.add(100.0, [60.0], [60.0], input_ms=3.0, waiting_ms=20.0)
        (line,) = timing.batch_lines()
        self.assertIn("judge's clock 100.00 ms = reported 60.00 + digests 5.00 + inputs 3.00", line)
        self.assertIn("waiting for a CPU 8.00 (of 20.00) + unexplained 24.00", line)

    def test_no_batches_no_flag(self):
        self.assertIsNone(_timing().flag())

    def test_round_trip_is_the_shortest_ping(self):
        # A fake clock, so a loaded machine cannot stretch the pings: each ping takes the next
        # of these many seconds.
        durations = iter([0.004, 0.001, 0.003, 0.002, 0.005])
        now = [100.0]

        def ping():
            now[0] += next(durations)

        with mock.patch.object(external_clock.time, "perf_counter", lambda: now[0]):
            measured = external_clock.round_trip_ms(ping)
        self.assertAlmostEqual(measured, 1.0, places=6)

if __name__ == "__main__":
    unittest.main()
