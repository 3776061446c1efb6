"""Whether anything stopped, slowed or moved the judge while it timed.

The candidate's processes run as the judge's user in the judge's PID namespace, so they can
send it SIGSTOP while it times eager PyTorch and torch.compile (which then look slower and the
candidate faster), raise its nice value, move it to another CPU, scheduling class or autogroup.
None of that can be prevented from here, but all of it can be seen: a stopped process needs
SIGCONT to run again, and SIGCONT, unlike SIGSTOP, can be caught, so a handler counts every
stop; the scheduling settings of each of the judge's threads are compared with those it
started with. A disturbed judge's timings are worthless, so the result is strict and its
baselines are not kept (engine/evaluation: no baseline from an evaluation with a strict flag).
"""

import os
import signal

STRICT = "strict"


def _autogroup() -> str:
    try:
        with open("/proc/self/autogroup") as handle:
            return handle.read().strip()
    except OSError:
        return ""


def _thread_settings(tid: int):
    """(CPU affinity, nice value, scheduling policy) of one of this process's threads, or None
    for a thread that ended meanwhile."""
    try:
        return (frozenset(os.sched_getaffinity(tid)), os.getpriority(os.PRIO_PROCESS, tid),
                os.sched_getscheduler(tid))
    except OSError:
        return None


def _shown(setting):
    return sorted(setting) if isinstance(setting, frozenset) else setting


def _threads() -> list:
    try:
        return [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:
        return [os.getpid()]


class JudgeWatch:
    """Started before the candidate is loaded; ``flag()`` after the timing says whether the
    judge ran undisturbed in between. Each thread is compared with its own settings at the start
    (the CUDA driver's and torch's CPU threads exist by then: the reference ran in preparation);
    a thread started later inherits the main thread's nice value and policy, so it is compared
    with those. Runs on the judge's main thread (signal handlers can only be installed there;
    the stages run on it)."""

    def __init__(self):
        self.continued = 0
        signal.signal(signal.SIGCONT, self._on_continue)
        # The stops that can be ignored are: only SIGSTOP is left, and it needs a SIGCONT.
        for stop in (signal.SIGTSTP, signal.SIGTTIN, signal.SIGTTOU):
            signal.signal(stop, signal.SIG_IGN)
        self._main = _thread_settings(os.getpid())
        self._start = {tid: _thread_settings(tid) for tid in _threads()}
        self._autogroup = _autogroup()

    def _on_continue(self, signum, frame) -> None:
        self.continued += 1

    def disturbances(self) -> list:
        found = []
        if self.continued:
            found.append(f"it was stopped and continued {self.continued} time(s)")
        names = ("CPU affinity", "nice value", "scheduling policy")
        for tid in _threads():
            now = _thread_settings(tid)
            known = self._start.get(tid)
            start = known or self._main
            if now is None or start is None:
                continue
            for name, before, after in zip(names, start, now):
                # A thread started since may have been bound to CPUs by its own library (an
                # OpenMP runtime with a binding policy); its priority and policy it inherits.
                if before != after and (known is not None or name != "CPU affinity"):
                    found.append(f"thread {tid}'s {name} changed from {_shown(before)} to {_shown(after)}")
        if _autogroup() != self._autogroup:
            found.append(f"its autogroup changed from '{self._autogroup}' to '{_autogroup()}'")
        return found

    def flag(self, while_it: str = "timed",
             so: str = "its timings of eager, torch.compile and the candidate cannot be trusted"):
        found = self.disturbances()
        if not found:
            return None
        return {"code": "judge_disturbed", "severity": STRICT,
                "reason": f"something changed how the judge ran while it {while_it} (" + "; ".join(found[:4]) +
                          f"): {so}"}
