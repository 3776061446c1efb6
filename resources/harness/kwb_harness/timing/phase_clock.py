"""Where a stage's time goes, for the instant loop's budget (not for rewards).

Each ``mark(name)`` charges the time since the previous mark to ``name``; ``note(name, seconds)``
records a part of a phase measured inside it ("checks: fetch outputs", not added to any total);
``report()`` prints one "phase times:" line into the stage log and returns the numbers for the
result document.
"""

import time

_now = time.perf_counter  # bound before any candidate code can rebind time.perf_counter


class PhaseClock:
    def __init__(self):
        self._last = _now()
        self.seconds = {}

    def mark(self, name: str) -> None:
        now = _now()
        self.seconds[name] = self.seconds.get(name, 0.0) + (now - self._last)
        self._last = now

    def note(self, name: str, seconds: float) -> None:
        self.seconds[name] = self.seconds.get(name, 0.0) + seconds

    def report(self) -> dict:
        print("phase times: " + ", ".join(f"{k} {v:.2f}s" for k, v in self.seconds.items()))
        return dict(self.seconds)
