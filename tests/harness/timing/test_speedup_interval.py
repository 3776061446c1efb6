"""The speed-up interval that decides milestones: where it lies, and when it leaves one open."""
import random
import unittest

from kwb_harness.timing import speedup_interval


def rounds(center: float, spread: float, count: int, seed: int) -> list:
    rng = random.Random(seed)
    return [center * (1.0 + rng.uniform(-spread, spread)) for _ in range(count)]


class SpeedupIntervalTest(unittest.TestCase):
    def test_a_clear_speedup_lies_wholly_above_the_threshold(self):
        low, high = speedup_interval.interval(rounds(2.0, 0.02, 10, 1), rounds(1.0, 0.02, 10, 2))
        self.assertLess(low, 2.0)
        self.assertGreater(high, 2.0)
        self.assertGreater(low, 1.9)
        self.assertFalse(speedup_interval.undecided((low, high), 1.05))

    def test_a_speedup_within_noise_of_the_threshold_is_undecided(self):
        bounds = speedup_interval.interval(rounds(1.05, 0.05, 6, 3), rounds(1.0, 0.05, 6, 4))
        self.assertTrue(speedup_interval.undecided(bounds, 1.05), bounds)

    def test_more_rounds_narrow_the_interval(self):
        few = speedup_interval.interval(rounds(1.2, 0.05, 4, 5), rounds(1.0, 0.05, 4, 6))
        many = speedup_interval.interval(rounds(1.2, 0.05, 40, 5), rounds(1.0, 0.05, 40, 6))
        self.assertLess(many[1] - many[0], few[1] - few[0])

    def test_the_same_rounds_give_the_same_interval(self):
        base, cand = rounds(1.3, 0.1, 8, 7), rounds(1.0, 0.1, 8, 8)
        self.assertEqual(speedup_interval.interval(base, cand), speedup_interval.interval(base, cand))

    def test_nothing_to_go_on_gives_no_interval(self):
        self.assertIsNone(speedup_interval.interval([], [1.0]))
        self.assertIsNone(speedup_interval.interval([1.0], []))
        self.assertIsNone(speedup_interval.interval([1.0], [0.0]))
        self.assertFalse(speedup_interval.undecided(None, 1.05))


if __name__ == "__main__":
    unittest.main()
