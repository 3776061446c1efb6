"""Time a busy machine took from a timed batch: the candidate's calling thread, and the judge's
thread, ready to run but waiting for a CPU.

On a loaded two-core machine the judge's clock around a batch includes tens of milliseconds in
which neither process ran at all; that time explains nothing the candidate did, and counted as
unexplained it rejected honest solutions (timing_mismatch in CI). The kernel keeps the figure for
every thread (/proc/<pid>/task/<tid>/schedstat: time on a CPU, time waiting on a run queue); the
judge reads it from outside, so the candidate cannot change it. Work done meanwhile on the
candidate's other threads (or by threads that ended) is CPU time of its process, and is taken off
what is excused: waiting excuses only time in which nothing of the candidate's ran.
"""

import os
import threading

_TICK_NS = 1e9 / os.sysconf("SC_CLK_TCK")


def _schedstat(path: str) -> tuple | None:
    """(ns on a CPU, ns waiting on a run queue) of one thread, or None."""
    try:
        with open(path) as handle:
            fields = handle.read().split()
        return int(fields[0]), int(fields[1])
    except (OSError, ValueError, IndexError):
        return None


def _process_cpu_ns(pid: int) -> int:
    """User and system time of every thread the process had, ended ones included (in ticks)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return int((int(fields[11]) + int(fields[12])) * _TICK_NS)
    except (OSError, ValueError, IndexError):
        return 0


class Sample:
    __slots__ = ("main_cpu", "main_wait", "others_cpu", "process_cpu", "judge_wait")

    def __init__(self, main_cpu, main_wait, others_cpu, process_cpu, judge_wait):
        self.main_cpu = main_cpu
        self.main_wait = main_wait
        self.others_cpu = others_cpu
        self.process_cpu = process_cpu
        self.judge_wait = judge_wait


def sample(pid: int) -> Sample:
    """The candidate's process ``pid`` (its calls run on its main thread) and this thread."""
    main = _schedstat(f"/proc/{pid}/task/{pid}/schedstat") or (0, 0)
    others = 0
    try:
        tids = [t for t in os.listdir(f"/proc/{pid}/task") if t != str(pid)]
    except OSError:
        tids = []
    for tid in tids:
        stat = _schedstat(f"/proc/{pid}/task/{tid}/schedstat")
        if stat:
            others += stat[0]
    judge = _schedstat(f"/proc/self/task/{threading.get_native_id()}/schedstat") or (0, 0)
    return Sample(main[0], main[1], others, _process_cpu_ns(pid), judge[1])


def own_wait_ns() -> int:
    """Nanoseconds this thread has waited on a run queue so far."""
    stat = _schedstat(f"/proc/self/task/{threading.get_native_id()}/schedstat")
    return stat[1] if stat else 0


def excused_ms(before: Sample, after: Sample) -> float:
    """Milliseconds of a batch in which the machine, not the candidate, kept the calls waiting."""
    other_work = max(after.others_cpu - before.others_cpu,
                     (after.process_cpu - before.process_cpu) - (after.main_cpu - before.main_cpu))
    candidate = max(0, (after.main_wait - before.main_wait) - max(0, other_work))
    judge = max(0, after.judge_wait - before.judge_wait)
    return (candidate + judge) / 1e6
