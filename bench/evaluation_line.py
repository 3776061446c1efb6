#!/usr/bin/env python3
"""One line about a `kwb eval --json` result for the GPU scripts' logs: its reward, its failure
(kind and message) or ok, the wall time since STARTED (seconds since the epoch), each stage's
seconds and the sandbox. With --honest it also exits 1 unless the result is what an honest
solution must get: correct, a reward of at least 1 and no strict flag.

    evaluation_line.py [--honest] LABEL STARTED RESULT_JSON
"""

import json
import sys
import time


def main() -> int:
    arguments = sys.argv[1:]
    honest = arguments[:1] == ["--honest"]
    if honest:
        arguments = arguments[1:]
    label, started, path = arguments[0], float(arguments[1]), arguments[2]
    try:
        with open(path) as f:
            r = json.load(f)
    except (OSError, ValueError) as e:
        try:
            text = open(path).read()[:300]
        except OSError:
            text = ""
        print(f"{label}: no result ({e}): {text}")
        return 1 if honest else 0
    failure = r.get("failure") or {}
    stages = " ".join(f"{s['name']} {s['seconds']:.2f}" for s in r.get("stages", []))
    print(f"{label}: reward {r.get('reward')}, {failure.get('kind') or 'ok'} "
          f"{(failure.get('message') or '')[:300]} ({time.time() - started:.1f} s; {stages}; "
          f"sandbox {r.get('sandbox')})")
    print(f"{label}: {r.get('reward_reason') or r.get('verdict') or ''}")
    strict = [f.get("code") for f in r.get("flags", []) if f.get("severity") == "strict"]
    if honest and (not r.get("correct") or (r.get("reward") or 0) < 1 or strict):
        print(f"{label}: an honest solution lost its reward (strict flags: {strict or 'none'})")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
