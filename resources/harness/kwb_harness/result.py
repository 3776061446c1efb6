"""Result document: common fields, JSON-safe values and the atomic write."""

import json
import math
import os
import sys
import tempfile

from . import PROTOCOL_VERSION

# JSON has no NaN or Infinity and Qt's parser rejects them. An infinite error is still
# "as wrong as it gets", so it becomes the largest double (which the reader can show as
# inf); NaN carries no magnitude and becomes null.
_LARGEST = sys.float_info.max


def new_result(stage: str) -> dict:
    return {
        "version": PROTOCOL_VERSION,
        "stage": stage,
        "ok": False,
        "skipped": False,
        "error": None,
        "log": "",
        "elapsed_s": 0.0,
        "environment": {"python": "", "torch": "", "cuda": "", "device_name": "", "driver": ""},
    }


def set_error(result: dict, kind: str, message: str) -> None:
    result["ok"] = False
    result["error"] = {"kind": kind, "message": message}


def json_safe(value):
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if math.isinf(value):
            return _LARGEST if value > 0 else -_LARGEST
        return value
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if value is None or isinstance(value, (bool, int, str)):
        return value
    return str(value)


def write_result(path: str, result: dict) -> None:
    """Writes next to the target and renames, so the reader never sees a partial file."""
    text = json.dumps(json_safe(result), indent=2, ensure_ascii=False, allow_nan=False)
    directory = os.path.dirname(os.path.abspath(path)) or "."
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".kwb-result-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
