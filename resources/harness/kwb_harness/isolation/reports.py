"""What the judge accepts from the candidate's process's reports.

Flags found inside the candidate's process (operators under the guard, replaced timers, threads
left running) are evidence the candidate could have suppressed, so they can only add to the
judge's own findings; they are still checked for shape and size, since the process that sends
them runs candidate code.
"""

_SEVERITIES = ("strict", "warning", "info")
_REASON_LIMIT = 2000


def checked_flag(flag) -> dict | None:
    """The flag as the judge records it, or None when it is not a well-formed flag."""
    if not isinstance(flag, dict):
        return None
    code, severity, reason = flag.get("code"), flag.get("severity"), flag.get("reason")
    if not isinstance(code, str) or not code or len(code) > 64 or not code.replace("_", "").isalnum():
        return None
    if severity not in _SEVERITIES or not isinstance(reason, str):
        return None
    return {"code": code, "severity": severity, "reason": reason[:_REASON_LIMIT],
            "source": "candidate process"}


def checked_flags(flags, limit: int = 32) -> list:
    if not isinstance(flags, list):
        return []
    return [f for f in (checked_flag(flag) for flag in flags[:limit]) if f is not None]


def missing_report_flag(why: str) -> dict:
    """Strict: without the report, nothing the candidate's process saw (operators under the
    guard, extension calls, threads, rebound names) can be checked, and a candidate that ends
    its process or breaks the reply when asked would hide all of it."""
    return {"code": "report_missing", "severity": "strict",
            "reason": f"the candidate's process gave no report of what it ran ({why[:300]}): its operators, "
                      "threads and rebound names cannot be checked"}


def well_formed(report) -> bool:
    return isinstance(report, dict) and isinstance(report.get("flags"), list)


def guard_flag(report: dict, requested: bool | None) -> dict | None:
    """Strict when the candidate's process did not keep the operator guard the judge asked for:
    the host holds that choice in an attribute the candidate's code can reach through the call
    stack, and its report says what it ended with. None when nothing was asked (``requested``
    None) or it was kept."""
    kept = report.get("guarded")
    if requested is None or (isinstance(kept, bool) and kept == bool(requested)):
        return None
    return {"code": "guard_evasion", "severity": "strict",
            "reason": f"the judge asked the candidate's process to run {'with' if requested else 'without'} "
                      f"the operator guard, and its report says guarded={kept!r}: the "
                      "candidate switched the guard's setting"}
