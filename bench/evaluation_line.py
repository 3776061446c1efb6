#!/usr/bin/env python3
"""One line about a `kwb eval --json` result for the GPU scripts' logs: its reward, its failure
(kind and message) or ok, the wall time since STARTED (seconds since the epoch), each stage's
seconds and the sandbox.

    evaluation_line.py LABEL STARTED RESULT_JSON
"""

import json
import sys
import time


def main():
    label, started, path = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    try:
        with open(path) as f:
            r = json.load(f)
    except (OSError, ValueError) as e:
        try:
            text = open(path).read()[:300]
        except OSError:
            text = ""
        print(f"{label}: no result ({e}): {text}")
        return
    failure = r.get("failure") or {}
    stages = " ".join(f"{s['name']} {s['seconds']:.2f}" for s in r.get("stages", []))
    print(f"{label}: reward {r.get('reward')}, {failure.get('kind') or 'ok'} "
          f"{(failure.get('message') or '')[:300]} ({time.time() - started:.1f} s; {stages}; "
          f"sandbox {r.get('sandbox')})")


if __name__ == "__main__":
    main()
