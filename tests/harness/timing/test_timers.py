"""The CUDA timer's order of work around one call, with a stand-in clock (no GPU needed): the
L2 flush is queued before the start event and never waited for on its own, and its GPU time
comes off the host time."""

import unittest

from kwb_harness.timing.timers import CudaTimer


class RecordingClock:
    """Logs every timer operation; host time and event gaps are scripted."""

    def __init__(self, host_ms: float, event_gaps_ms: dict):
        self.log = []
        self._host = iter([0.0, host_ms / 1e3])
        self._gaps = event_gaps_ms

    def perf_counter(self) -> float:
        self.log.append("host clock")
        return next(self._host)

    def new_event(self):
        return object()

    def record(self, event) -> None:
        self.log.append(("record", self._names[id(event)]))

    def elapsed_ms(self, start, end) -> float:
        return self._gaps[(self._names[id(start)], self._names[id(end)])]

    def synchronize_device(self) -> None:
        self.log.append("synchronize")

    def gpu_sleep(self, cycles: int) -> None:
        self.log.append(("spin", cycles))


class FlushBuffer:
    def __init__(self, log: list):
        self._log = log

    def zero_(self):
        self._log.append("flush")


def timer_with(clock: RecordingClock, flush: bool, head_cycles: int = 0) -> CudaTimer:
    # The constructor allocates the flush buffer on the GPU; the fields are set by hand instead.
    timer = CudaTimer.__new__(CudaTimer)
    timer._clock = clock
    timer._flush_buffer = FlushBuffer(clock.log) if flush else None
    timer.flushes_l2 = flush
    timer._head_cycles = head_cycles
    timer._flush, timer._start, timer._end = object(), object(), object()
    clock._names = {id(timer._flush): "flush", id(timer._start): "start", id(timer._end): "end"}
    return timer


class CudaTimerTest(unittest.TestCase):
    def test_the_flush_is_queued_before_the_start_event_without_a_wait_of_its_own(self):
        clock = RecordingClock(host_ms=0.5, event_gaps_ms={("start", "end"): 0.2, ("flush", "start"): 0.1})
        timer = timer_with(clock, flush=True)
        calls = []
        device_ms, host_ms, output = timer.time_call(lambda x: calls.append(x) or "out", [7])
        self.assertEqual(output, "out")
        self.assertEqual(calls, [7])
        self.assertEqual(clock.log, ["synchronize", "host clock", ("record", "flush"), "flush",
                                     ("record", "start"), ("record", "end"), "synchronize", "host clock"])
        self.assertAlmostEqual(device_ms, 0.2)
        # 0.5 ms on the host, of which the GPU spent 0.1 ms flushing before the start event.
        self.assertAlmostEqual(host_ms, 0.4)

    def test_without_a_flush_the_host_time_is_the_whole_call(self):
        clock = RecordingClock(host_ms=0.3, event_gaps_ms={("start", "end"): 0.25})
        timer = timer_with(clock, flush=False)
        device_ms, host_ms, _ = timer.time_call(lambda: None, [])
        self.assertNotIn("flush", clock.log)
        self.assertAlmostEqual(device_ms, 0.25)
        self.assertAlmostEqual(host_ms, 0.3)

    def test_a_head_start_spins_between_the_flush_and_the_start_event_and_leaves_the_host_time(self):
        clock = RecordingClock(host_ms=0.6, event_gaps_ms={("start", "end"): 0.2, ("flush", "start"): 0.25})
        device_ms, host_ms, _ = timer_with(clock, flush=True, head_cycles=1000).time_call(lambda: None, [])
        self.assertEqual(clock.log, ["synchronize", "host clock", ("record", "flush"), "flush", ("spin", 1000),
                                     ("record", "start"), ("record", "end"), "synchronize", "host clock"])
        self.assertAlmostEqual(device_ms, 0.2)
        # The flush and the spin (0.25 ms on the GPU before the start event) are no variant's time.
        self.assertAlmostEqual(host_ms, 0.35)

    def test_a_head_start_without_a_flush_still_comes_off_the_host_time(self):
        clock = RecordingClock(host_ms=0.4, event_gaps_ms={("start", "end"): 0.1, ("flush", "start"): 0.1})
        _, host_ms, _ = timer_with(clock, flush=False, head_cycles=500).time_call(lambda: None, [])
        self.assertEqual(clock.log[2:5], [("record", "flush"), ("spin", 500), ("record", "start")])
        self.assertAlmostEqual(host_ms, 0.3)

    def test_the_spin_is_sized_from_one_timed_spin(self):
        # 2,000,000 cycles took 1 ms on the stand-in GPU: 2,000 cycles per microsecond.
        clock = RecordingClock(host_ms=0, event_gaps_ms={("start", "end"): 1.0})
        timer = timer_with(clock, flush=False)
        self.assertEqual(timer._cycles_for(100.0), 200_000)
        self.assertIn(("spin", 2_000_000), clock.log)

    def test_a_flush_longer_than_the_host_saw_never_makes_the_host_time_negative(self):
        clock = RecordingClock(host_ms=0.05, event_gaps_ms={("start", "end"): 0.01, ("flush", "start"): 0.2})
        _, host_ms, _ = timer_with(clock, flush=True).time_call(lambda: None, [])
        self.assertEqual(host_ms, 0.0)


if __name__ == "__main__":
    unittest.main()
