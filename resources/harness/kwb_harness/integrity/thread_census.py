"""Threads alive in the harness process, before and after the candidate ran.

Work handed to another thread can finish after ``forward`` returned and the timer stopped.
Python threads started by the candidate and still alive are a strict flag. Operating-system
threads (from C++ in an extension, or lazily started by libraries) are reported as a warning,
since torch and OpenMP start pools of their own on first use.
"""

import os
import threading


def snapshot() -> dict:
    try:
        tasks = set(os.listdir("/proc/self/task"))
    except OSError:
        tasks = set()
    return {"python": {t.ident for t in threading.enumerate()}, "os": tasks}


def _thread_name(tid: str) -> str:
    try:
        with open(f"/proc/self/task/{tid}/comm", "r", encoding="utf-8") as handle:
            return handle.read().strip()
    except OSError:
        return "?"


def flags_since(before: dict) -> list:
    after = snapshot()
    flags = []
    new_python = [t for t in threading.enumerate() if t.ident not in before["python"] and t.is_alive()]
    if new_python:
        flags.append({"code": "threads_started", "severity": "strict",
                      "reason": "the candidate started Python threads that are still running: "
                                + ", ".join(t.name for t in new_python[:5])})
    new_os = sorted(after["os"] - before["os"])
    if new_os and not new_python:
        flags.append({"code": "os_threads_started", "severity": "warning",
                      "reason": f"{len(new_os)} new OS thread(s) after the candidate ran: "
                                + ", ".join(_thread_name(t) for t in new_os[:5])})
    return flags
