"""Finding and ending every process below a pid, from /proc.

A candidate may fork, double-fork or call ``setsid``; none of that takes a process out from
under an ancestor that is a child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)``), so listing the
parent links in /proc finds them all.
"""

import ctypes
import os
import signal
import sys
import time

_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_PR_SET_CHILD_SUBREAPER = 36


def _prctl(option: int, value: int) -> bool:
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def become_judge() -> None:
    """Makes the calling process unreachable for its children's mischief: not dumpable (no
    ptrace, no /proc/PID/mem or /proc/PID/fd for processes of the same user without
    CAP_SYS_PTRACE) and a child subreaper (orphans of its children stay below it)."""
    _prctl(_PR_SET_DUMPABLE, 0)
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)


def set_dumpable(dumpable: bool) -> None:
    """Whether processes of the same user may ptrace this one or open its /proc/PID/fd and mem
    (inherited across fork)."""
    _prctl(_PR_SET_DUMPABLE, 1 if dumpable else 0)


def become_subreaper() -> None:
    """Orphans of the caller's descendants (a double fork, a daemon) are reparented to the caller
    instead of init, so they stay in its tree and die with it."""
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)


def die_with_parent() -> None:
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def children(parent: int) -> list:
    """The direct children of ``parent``."""
    return _children_by_parent().get(parent, [])


def descendants(root: int) -> list:
    """Pids below ``root`` (children, grandchildren, ...)."""
    children = _children_by_parent()
    found, frontier = [], [root]
    while frontier:
        below = children.get(frontier.pop(), [])
        found += below
        frontier += below
    return found


def _stat_fields(pid) -> list:
    """The fields of /proc/PID/stat after the command name (state, ppid, pgrp, session, ...);
    empty when the process is gone. The name may contain spaces and parentheses, so the fields
    are those after the last ')'."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return []
    return stat[stat.rfind(b")") + 2:].split()


def _children_by_parent() -> dict:
    children = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        fields = _stat_fields(entry)
        if len(fields) > 1:
            children.setdefault(int(fields[1]), []).append(int(entry))
    return children


def state(pid: int) -> str:
    """The process's state letter from /proc (R, S, D, T, t, Z, ...); "" when it is gone."""
    fields = _stat_fields(pid)
    return fields[0].decode("ascii", "replace") if fields else ""


def session(pid: int) -> int:
    """The process's session id from /proc; -1 when it is gone."""
    fields = _stat_fields(pid)
    return int(fields[3]) if len(fields) > 3 else -1


def command_name(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm", "rb") as handle:
            return handle.read().decode("utf-8", "replace").strip()
    except OSError:
        return "?"


# States of a process that no longer runs: stopped, traced, zombie, dead, or gone ("").
_NOT_RUNNING = {"T", "t", "Z", "X", "x", ""}
_QUIET_PASSES = 2


def stop_until_still(list_tree, patience_s: float) -> tuple:
    """SIGSTOP to every pid ``list_tree()`` returns, pass after pass, until a pass finds no new
    pid and none still running, or ``patience_s`` runs out. One list, taken once and signalled in
    order, misses what starts while it is signalled: a helper that watches for the stop starts
    its workers then. Returns (every pid seen, the pids still running at the end)."""
    stopped = set()
    deadline = time.monotonic() + patience_s
    quiet = 0
    while True:
        tree = list_tree()
        fresh = [pid for pid in tree if pid not in stopped]
        for pid in fresh:
            try:
                os.kill(pid, signal.SIGSTOP)
            except OSError:
                pass
            stopped.add(pid)
        running = [pid for pid in tree if state(pid) not in _NOT_RUNNING]
        # Two quiet passes a millisecond apart: a fork the stop caught near its end can leave
        # the child appearing in /proc just after its parent already shows as stopped.
        quiet = quiet + 1 if not fresh and not running else 0
        if quiet >= _QUIET_PASSES or time.monotonic() > deadline:
            return sorted(stopped), running
        time.sleep(0.001 if quiet else 0.0002)


def signal_tree(pid: int, signum: int, include_root: bool = True) -> None:
    for target in ([pid] if include_root else []) + descendants(pid):
        try:
            os.kill(target, signum)
        except OSError:
            pass


def end_descendants() -> None:
    """Kills everything below the calling process and reaps what it can. A stage calls it
    before writing its result: a process the candidate left behind (below the stage, which is a
    subreaper) could otherwise rewrite the result file between the write and kwb's read."""
    for _ in range(3):  # a process may fork while the list is taken; the next pass gets the child
        below = descendants(os.getpid())
        if not below:
            break
        for pid in below:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    while True:
        try:
            done, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if not done:
            break


def kill_tree(pid: int) -> None:
    signal_tree(pid, signal.SIGKILL)
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass


def exit_after(label: str, body) -> None:
    """Runs ``body()`` (which returns the exit code) in a forked child and ends the process
    whatever happens: a forked child must never return into its parent's code."""
    code = 3
    try:
        code = body()
    except BaseException as exc:  # noqa: BLE001 - the child must always end in _exit
        try:
            os.write(2, f"kwb_harness {label}: {type(exc).__name__}: {exc}\n".encode())
        except OSError:
            pass
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:
            pass
        os._exit(code)
