"""Whether a round the judge timed itself waited on a busy host, and so is timed again.

The judge times eager and torch.compile in its own thread (stages/profile.py), and the engine
caches those times for every later evaluation of the task. When other evaluations load the CPU
(a rollout's episodes, a service running several at once), that thread can sit on a run queue
between its timed calls. For a launch-bound operation the GPU then idles inside the timed window,
waiting for the next launch, and the wait counts as the operation's time. On an H100 on
2026-12-06 a row mean's eager time was cached at 65 us while 8 evaluations ran beside it;
KernelBench measured 36 us on the idle host, and the speed-ups against the cached time came out
1.8x too high (bench/results/2026-12-06-h100-seventh-session.md). A cached baseline that is too
slow rewards every later candidate of that task.

The kernel counts each thread's time on a run queue (/proc/self/task/<tid>/schedstat,
scheduler_wait.py). A round whose thread waited more than a small share of the time it measured
is timed again, a few times at most. A round that is still disturbed after that is kept, so the
evaluation goes on, but it is marked, and the engine does not cache such a baseline: the next
evaluation times it again.
"""

from . import scheduler_wait

# Rounds timed again at most, per round.
RETRIES = 2
# An idle host still preempts a thread now and then for a tick; waits below this are that.
FLOOR_MS = 0.2
# Beyond the floor, a wait up to this share of the round's measured time is accepted: it can
# lengthen the round's mean by no more than that share.
SHARE = 0.05


def disturbed(waited_ms: float, measured_ms: float) -> bool:
    """Whether a round that measured ``measured_ms`` in all (the sum of its samples) while its
    thread waited ``waited_ms`` on a run queue must be timed again."""
    return waited_ms > max(FLOOR_MS, SHARE * measured_ms)


class RoundWatch:
    """The run-queue wait of this thread over one round."""

    def __init__(self):
        self._start = scheduler_wait.own_wait_ns()

    def stop(self) -> float:
        """Milliseconds waited since the watch began."""
        return (scheduler_wait.own_wait_ns() - self._start) / 1e6


class Round:
    """What ``timed_round`` kept: the samples, the wait over them, the rounds timed again
    before them, and whether they still waited too long."""

    __slots__ = ("devices_ms", "hosts_ms", "waited_ms", "retimed", "disturbed")

    def __init__(self, devices_ms, hosts_ms, waited_ms, retimed, disturbed):
        self.devices_ms, self.hosts_ms = devices_ms, hosts_ms
        self.waited_ms, self.retimed, self.disturbed = waited_ms, retimed, disturbed


def timed_round(run, retries: int = RETRIES, on_retry=None) -> Round:
    """Runs ``run()`` (which returns the round's device and host samples in milliseconds) until
    its thread waited no longer than ``disturbed`` allows, at most ``retries`` times more; keeps
    the last. ``on_retry(waited_ms, measured_ms)`` hears of each round timed again."""
    for attempt in range(retries + 1):
        watch = RoundWatch()
        devices_ms, hosts_ms = run()
        waited = watch.stop()
        late = disturbed(waited, sum(devices_ms))
        if not late or attempt == retries:
            return Round(devices_ms, hosts_ms, waited, attempt, late)
        if on_retry is not None:
            on_retry(waited, sum(devices_ms))
    raise AssertionError("unreachable")
