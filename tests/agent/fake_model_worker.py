#!/usr/bin/env python3
"""Stands in for `kwb-model serve` in the local provider's tests: the same JSON-lines protocol on
descriptor 3, with replies scripted by the "model" file the provider names. Standard library only.

The model file: {"load": "ok" or an error text, "replies": [step, ...]}; each sample request takes
the next step: {"sample": {...}} answers with that sample (prompt_tokens [1, 2, 3]),
{"sleep": s} sleeps and answers nothing (a hung generation), {"crash": code} exits,
{"garbage": text} writes a line that is not JSON, {"error": text, "error_kind": kind} refuses.
Every request is appended to MODEL.requests.jsonl and every start counted in MODEL.starts, so a
test sees what the provider sent and how often the process was started."""
import json
import os
import sys
import time


def main():
    model = sys.argv[sys.argv.index("serve") + 1]
    with open(model + ".starts", "a") as starts:
        starts.write("start\n")
    script = json.load(open(model))
    channel = os.fdopen(3, "r+b", buffering=0)

    def send(value):
        data = value if isinstance(value, bytes) else json.dumps(value).encode()
        channel.write(data + b"\n")

    if script.get("load", "ok") != "ok":
        send({"error": script["load"]})
        return 1
    send({"ready": True, "model": "fake model", "vocabulary": 10, "trainable_parameters": 0})
    index_path = model + ".index"
    pending = b""
    while True:
        while b"\n" not in pending:
            chunk = channel.read(65536)
            if not chunk:
                return 0
            pending += chunk
        line, pending = pending.split(b"\n", 1)
        request = json.loads(line)
        with open(model + ".requests.jsonl", "a") as log:
            log.write(json.dumps(request) + "\n")
        if request.get("op") == "quit":
            return 0
        index = int(open(index_path).read()) if os.path.exists(index_path) else 0
        replies = script["replies"]
        step = replies[min(index, len(replies) - 1)]
        with open(index_path, "w") as f:
            f.write(str(index + 1))
        if "sleep" in step:
            time.sleep(step["sleep"])
            continue
        if "crash" in step:
            os._exit(step["crash"])
        if "garbage" in step:
            send(step["garbage"].encode())
            continue
        if "error" in step:
            send({"id": request["id"], "error": step["error"], "error_kind": step.get("error_kind", "")})
            continue
        send({"id": request["id"], "prompt_tokens": [1, 2, 3], "samples": [step["sample"]],
              "seconds": 0.01, "tokens_per_second": 100.0})


if __name__ == "__main__":
    sys.exit(main())
