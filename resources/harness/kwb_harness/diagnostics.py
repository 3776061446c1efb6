"""Turns g++/nvcc/cudafe/linker output into structured diagnostics."""

import os
import re

# g++ / clang / nvcc host-compiler style: path:line:col: severity: message
_GCC = re.compile(
    r"^(?P<file>[^\s:][^:\n]*?):(?P<line>\d+):(?:(?P<col>\d+):)? "
    r"(?P<sev>fatal error|error|warning|note): (?P<msg>.*)$"
)
# cudafe (nvcc front end) style: path(line): severity #code-D: message
_CUDAFE = re.compile(
    r"^(?P<file>[^\s(][^(\n]*?)\((?P<line>\d+)\): "
    r"(?P<sev>catastrophic error|error|warning|remark|note)(?: #[\w-]+)?: (?P<msg>.*)$"
)
# Errors that name no source line but still explain a failed build.
_FILELESS = (
    re.compile(r"undefined reference to .*"),
    re.compile(r"cannot find -l\S+"),
    re.compile(r"^ptxas (?:error|fatal)\s*: .*"),
    re.compile(r"^nvcc fatal\s*: .*"),
)

_SEVERITY = {
    "fatal error": "error",
    "catastrophic error": "error",
    "error": "error",
    "warning": "warning",
    "note": "note",
    "remark": "note",
}


def workspace_relative(path: str, workspace: str | None, base_dir: str | None = None) -> str:
    # ninja runs the compilers inside the build folder, so their paths may be relative to it.
    if base_dir and not os.path.isabs(path):
        path = os.path.join(base_dir, path)
    path = os.path.normpath(path)
    if workspace and os.path.isabs(path):
        rel = os.path.relpath(path, os.path.normpath(workspace))
        if not rel.startswith(".."):
            return rel
    return path


def parse_diagnostics(output: str, workspace: str | None, base_dir: str | None = None) -> list:
    diagnostics = []
    seen = set()
    for raw in output.splitlines():
        line = raw.rstrip()
        match = _GCC.match(line) or _CUDAFE.match(line)
        if match:
            entry = {
                "file": workspace_relative(match.group("file"), workspace, base_dir),
                "line": int(match.group("line")),
                "column": int(match.groupdict().get("col") or 0),
                "severity": _SEVERITY[match.group("sev")],
                "message": match.group("msg").strip(),
            }
        else:
            found = None
            for pattern in _FILELESS:
                found = pattern.search(line)
                if found:
                    break
            if not found:
                continue
            entry = {"file": "", "line": 0, "column": 0, "severity": "error", "message": found.group(0).strip()}
        key = tuple(entry.values())
        if key not in seen:
            seen.add(key)
            diagnostics.append(entry)
    return diagnostics


def format_diagnostic(diag: dict) -> str:
    where = diag["file"]
    if where and diag["line"]:
        where += f":{diag['line']}"
        if diag["column"]:
            where += f":{diag['column']}"
    prefix = f"{where}: " if where else ""
    return f"{prefix}{diag['severity']}: {diag['message']}"


def first_error(diagnostics: list, output: str) -> str:
    for diag in diagnostics:
        if diag["severity"] == "error":
            return format_diagnostic(diag)
    # Nothing recognisable: the first line mentioning an error is the best summary left.
    for line in output.splitlines():
        if "error" in line.lower() and not line.startswith("["):
            return line.strip()[:2000]
    lines = [l for l in output.splitlines() if l.strip()]
    return "\n".join(lines[-5:])[:2000] if lines else "build failed without output"
