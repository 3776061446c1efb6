"""What the sealed kernel records cost a timed call, on a GPU host.

Runs the same small forward (three torch elementwise kernels on 1M floats, then a
synchronisation) N times in a fresh process per variant and prints the median wall time per call:
no injection library; the judge's "discard" mode; the candidate's "sealed" mode (records, seal,
launch count); sealed with CUPTI's timestamp callback on CLOCK_MONOTONIC; sealed without the
launch count. Usage: python3 bench/records_overhead.py LIBRARY [CALLS]
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "resources", "harness"))

CHILD = r"""

import statistics, sys, time, torch
x = torch.rand(1 << 20, device="cuda"); s = torch.rand(1 << 20, device="cuda")
for _ in range(50):
    torch.sigmoid(x * s + x)
torch.cuda.synchronize()
times = []
for _ in range(int(sys.argv[1])):
    t = time.perf_counter()
    torch.sigmoid(x * s + x)
    torch.cuda.synchronize()
    times.append((time.perf_counter() - t) * 1e6)
print(statistics.median(times))
"""


def run(calls: int, env: dict, records=None) -> float:
    fds = records.child_descriptors() if records is not None else ()
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(calls)], env=env, pass_fds=fds,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if records is not None:
        records.start_reading()  # drained while the child runs, as the judge does
    out, err = child.communicate()
    if child.returncode != 0:
        raise RuntimeError(err[-2000:])
    return float(out.strip().splitlines()[-1])


def main() -> None:
    from kwb_harness.integrity.kernel_records import KernelRecords

    library = os.path.abspath(sys.argv[1])
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    base = {k: v for k, v in os.environ.items() if not k.startswith(("KWB_", "CUDA_INJECTION"))}
    rows = []
    variants = (("no library", None), ("discard (judge)", {"KWB_KERNEL_RECORDS": "discard"}),
                ("discard without the launch count", {"KWB_KERNEL_RECORDS": "discard", "KWB_RECORDS_PROBE": "nocount"}),
                ("sealed (candidate)", {}),
                ("sealed + CLOCK_MONOTONIC timestamp callback", {"KWB_RECORDS_PROBE": "clock"}),
                ("sealed without the launch count", {"KWB_RECORDS_PROBE": "nocount"}))
    # Round-robin over the variants: the machine's own drift between repeats (29-41 us for the same
    # variant on 2026-12-02) lands on every variant alike.
    for repeat in range(int(os.environ.get("REPEATS", "3"))):
        for label, extra in variants:
            env = dict(base)
            records = None
            if extra is not None:
                env["CUDA_INJECTION64_PATH"] = library
                env.update(extra)
                if "KWB_KERNEL_RECORDS" not in extra:
                    records = KernelRecords(library)
                    env.update(records.child_environment())
            median_us = run(calls, env, records)
            if records is not None:
                state = records.wait_complete_past(0, 5)
                extra_note = f"{records.kernel_records} kernel records, {state}"
            else:
                extra_note = ""
            rows.append((label, repeat, median_us, extra_note))
            print(json.dumps({"variant": label, "repeat": repeat, "median_us_per_call": round(median_us, 2),
                              "note": extra_note}), flush=True)


if __name__ == "__main__":
    main()
