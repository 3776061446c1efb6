"""Error kinds shared with the C++ side; the strings are part of the JSON contract."""

BAD_REQUEST = "bad_request"
TASK_IMPORT = "task_import"
TASK_MISSING_FUNCTION = "task_missing_function"
TASK_BAD_INIT_INPUTS = "task_bad_init_inputs"
TASK_RUN = "task_run"
# The task's inputs, sized on the meta device, need more memory than an evaluation may take here.
TASK_TOO_LARGE = "task_too_large"
# The task's reference ran out of memory: what else held the memory then decides it, not the task
# (the engine treats it as its own failure, never the candidate's or the task's).
TASK_OUT_OF_MEMORY = "task_out_of_memory"
CANDIDATE_IMPORT = "candidate_import"
CANDIDATE_MISSING_CLASS = "candidate_missing_class"
CANDIDATE_INIT = "candidate_init"
STATE_DICT_MISMATCH = "state_dict_mismatch"
CANDIDATE_RUN = "candidate_run"
COMPILE_ERROR = "compile_error"
OUTPUT_MISMATCH = "output_mismatch"
NUMERICAL_MISMATCH = "numerical_mismatch"
CUDA_ERROR = "cuda_error"
SECOND_SHAPE_FAILED = "second_shape_failed"
# The candidate's process was killed by a signal (the engine reports a stage that died so too).
CRASHED = "crashed"
INTERNAL = "internal"


class HarnessError(Exception):
    """A failure that the stage understood and can describe with one of the kinds above.

    Anything else escaping a stage is reported as ``internal``, which tells the user the
    harness (not their code) is at fault.
    """

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind
        self.message = message


_MESSAGE_LIMIT = 4000


def _shorten(text: str, limit: int = _MESSAGE_LIMIT) -> str:
    text = text.strip()
    if len(text) <= limit:
        return text
    return text[: limit // 2] + "\n[...]\n" + text[-limit // 2 :]


def _display_path(path: str, base: str | None) -> str:
    import os

    if base:
        try:
            rel = os.path.relpath(path, base)
            if not rel.startswith(".."):
                return rel
        except ValueError:
            pass
    return path


def describe_exception(exc: BaseException, base: str | None = None, frames: int = 4) -> str:
    """``Type: message`` plus the last few frames, paths shown relative to ``base``.

    The user needs the line in their own file, not the whole interpreter stack, and the
    message has to fit in a status line on the C++ side.
    """
    import traceback

    if isinstance(exc, SyntaxError) and exc.filename:
        where = f"{_display_path(exc.filename, base)}:{exc.lineno or 0}"
        if exc.offset:
            where += f":{exc.offset}"
        text = f"{where}: {type(exc).__name__}: {exc.msg}"
        if exc.text:
            text += "\n    " + exc.text.rstrip("\n")
            if exc.offset:
                text += "\n    " + " " * max(exc.offset - 1, 0) + "^"
        return text

    head = f"{type(exc).__name__}: {exc}".strip()
    stack = traceback.extract_tb(exc.__traceback__)
    # Frames of the harness, of torch and of importlib say nothing about the user's bug;
    # they are dropped unless nothing else is left.
    own = [frame for frame in stack if not _is_machinery(frame.filename)]
    lines = []
    for frame in (own or stack)[-frames:]:
        line = f'  File "{_display_path(frame.filename, base)}", line {frame.lineno}, in {frame.name}'
        if frame.line:
            line += "\n    " + frame.line.strip()
        lines.append(line)
    if lines:
        return _shorten(head) + "\nTraceback (most recent call last, shortened):\n" + "\n".join(lines)
    return _shorten(head)


def _machinery_dirs() -> tuple:
    import os
    import sys

    dirs = [os.path.dirname(os.path.abspath(__file__)) + os.sep]
    torch = sys.modules.get("torch")
    if torch is not None and getattr(torch, "__file__", None):
        dirs.append(os.path.dirname(os.path.abspath(torch.__file__)) + os.sep)
    return tuple(dirs)


def _is_machinery(filename: str) -> bool:
    import os

    if filename.startswith("<frozen") or filename.startswith("<"):
        return True
    return os.path.abspath(filename).startswith(_machinery_dirs())
