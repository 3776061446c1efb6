#!/usr/bin/env python3
"""What the harness's per-call work around a timed CPU call (the output digest, rescaling the next
input set) costs on one and on two torch threads, idle and beside a process that keeps both cores
busy: the evidence behind device.one_thread (resources/harness/kwb_harness/device.py).

    <venv python> bench/digest_threads.py [--mb 64] [--busy-seconds 30]

Prints a Markdown table: min / median / max milliseconds of 12 digests and 12 in-place rescales
of a float32 tensor of the given size, for each thread count, idle and busy.
"""
import argparse
import multiprocessing
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "resources", "harness"))


def _burn(seconds: float) -> None:
    import torch

    torch.set_num_threads(2)
    a = torch.randn(2048, 2048)
    end = time.time() + seconds
    while time.time() < end:
        a @ a


def _measure(threads: int, megabytes: int) -> tuple:
    import torch
    from kwb_harness.integrity import output_digest

    torch.set_num_threads(threads)
    x = torch.randn(megabytes * 1024 * 1024 // 4)
    key = output_digest.new_key()
    digests, rescales = [], []
    for _ in range(12):
        started = time.perf_counter()
        output_digest.digest(x, key)
        digests.append((time.perf_counter() - started) * 1e3)
    for _ in range(12):
        started = time.perf_counter()
        x.mul_(1.0001)
        rescales.append((time.perf_counter() - started) * 1e3)
    return digests, rescales


def _row(load: str, threads: int, digests: list, rescales: list) -> str:
    def triple(values):
        return f"{min(values):.1f} / {statistics.median(values):.1f} / {max(values):.1f}"

    return f"| {load} | {threads} | {triple(digests)} | {triple(rescales)} |"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=64)
    parser.add_argument("--busy-seconds", type=float, default=30.0)
    args = parser.parse_args()
    import torch

    print(f"date: {time.strftime('%Y-%m-%d %H:%M:%S %Z')}; cores: {os.cpu_count()}; torch {torch.__version__}; "
          f"tensor {args.mb} MB float32")
    print("| load | torch threads | digest ms (min / median / max) | rescale ms (min / median / max) |")
    print("|---|---|---|---|")
    for threads in (2, 1):
        print(_row("idle", threads, *_measure(threads, args.mb)), flush=True)
    burner = multiprocessing.get_context("spawn").Process(target=_burn, args=(args.busy_seconds,))
    burner.start()
    try:
        time.sleep(3)  # the busy process is past its start-up
        for threads in (2, 1, 2, 1):
            print(_row("busy", threads, *_measure(threads, args.mb)), flush=True)
    finally:
        burner.terminate()
        burner.join()


if __name__ == "__main__":
    main()
