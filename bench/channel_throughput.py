"""How long one output takes from the candidate's process to the judge (isolation/channel.py):
through the socket (the stream path) and through a sealed memory file (values of 1 MiB or more).

    PYTHONPATH=resources/harness python bench/channel_throughput.py [--mib 64] [--repeats 5] [--device cpu|cuda]

Prints the median milliseconds per path, sender and receiver in two threads of one process over a
socketpair, as the judge and the candidate's process use it (on CUDA the receiver copies the value
to the GPU, as the judge does).
"""

import argparse
import socket
import statistics
import threading
import time

import torch

from kwb_harness.isolation import shared_values
from kwb_harness.isolation.channel import Channel


def measure(value, repeats: int, device: str) -> float:
    a, b = socket.socketpair()
    sender, receiver = Channel(a), Channel(b)
    times = []

    def send():
        for _ in range(repeats):
            sender.send({"op": "fetch"}, {"outputs": [value]})

    thread = threading.Thread(target=send)
    thread.start()
    for _ in range(repeats):
        started = time.perf_counter()
        _, got = receiver.receive(device)
        if device == "cuda":
            torch.cuda.synchronize()
        times.append((time.perf_counter() - started) * 1e3)
        assert torch.equal(got["outputs"][0], value)
    thread.join()
    sender.close()
    receiver.close()
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mib", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    args = parser.parse_args()
    value = torch.randn(args.mib << 18, device=args.device)
    shared = measure(value, args.repeats, args.device)
    threshold = shared_values.SHARED_MIN_BYTES
    shared_values.SHARED_MIN_BYTES = 1 << 62  # everything through the socket
    try:
        stream = measure(value, args.repeats, args.device)
    finally:
        shared_values.SHARED_MIN_BYTES = threshold
    print(f"{args.mib} MiB on {args.device}, median of {args.repeats}: socket {stream:.1f} ms, "
          f"memory file {shared:.1f} ms ({stream / shared:.1f}x)")


if __name__ == "__main__":
    main()
