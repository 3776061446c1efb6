"""How sure a speed-up is: a bootstrap interval over the timing rounds.

A milestone is a threshold on a speed-up (1.05: more than 5% faster). For a kernel whose speed
sits within noise of the threshold, the point estimate earns the milestone on one run and misses
it on the next. Each timing round gives one median per variant; resampling the rounds (with
replacement) and taking the ratio of the baseline's median to the candidate's, many times over,
shows how far that ratio could move given what was measured. The profile stage runs more rounds
while the interval straddles the threshold, and the reward counts a milestone only when the
whole interval lies above it.
"""

import random
import statistics

LEVEL = 0.90
_RESAMPLES = 400
# Fixed: the same rounds always give the same interval, so a decision can be reproduced.
_SEED = 20261202


def interval(baseline_rounds: list, candidate_rounds: list, level: float = LEVEL) -> tuple | None:
    """(low, high) of the speed-up baseline / candidate, or None without rounds to go on."""
    if not baseline_rounds or not candidate_rounds or min(candidate_rounds) <= 0:
        return None
    rng = random.Random(_SEED)
    ratios = sorted(
        statistics.median(rng.choices(baseline_rounds, k=len(baseline_rounds)))
        / statistics.median(rng.choices(candidate_rounds, k=len(candidate_rounds)))
        for _ in range(_RESAMPLES))
    tail = (1.0 - level) / 2.0
    return ratios[int(tail * (_RESAMPLES - 1))], ratios[int(round((1.0 - tail) * (_RESAMPLES - 1)))]


def undecided(bounds: tuple | None, threshold: float) -> bool:
    """Whether the interval leaves open which side of the threshold the speed-up is on (a
    milestone needs a speed-up above the threshold)."""
    return bounds is not None and bounds[0] <= threshold < bounds[1]
