"""GPU values from another process stay on the GPU: they arrive whole in the receiver's own
memory, and a sender's false word (an offset past its allocation, a handle that names nothing)
is refused without upsetting the channel; small ones, through the socket, each keep their own bytes;
a strided value's contiguous copy stays allocated while the receiver copies it (GPU; exits 77,
ctest's skip, without one)."""
import socket
import subprocess
import sys
import time
import unittest

import torch

from kwb_harness.isolation.channel import Channel, ProtocolError

# Runs in the sending process. Keeps its memory until the receiver says it is done with it.
SENDER = r"""
import socket, sys, torch
from kwb_harness.isolation import cuda_ipc
from kwb_harness.isolation.channel import Channel
channel = Channel(socket.socket(fileno=int(sys.argv[1])))
big = torch.arange(1 << 24, dtype=torch.float32, device="cuda")
value = {"big": big.view(4096, 4096), "tail": big[1 << 20:], "even": big[:1000].remainder(2) == 0,
         "count": 7}
channel.send({"case": "whole"}, value, has_value=True, on_gpu=True)
channel.receive()

small = torch.ones(1 << 20, device="cuda")
sizes = [small.numel() * 4]
entries = cuda_ipc.export([small], sizes)
base, extent = cuda_ipc._allocation(small.data_ptr())
entries[0]["offset"] = extent - sizes[0] + 4096
description = {"list": [{"tensor": 0, "dtype": "float32", "shape": [1 << 20]}]}
channel._send_frame({"case": "past", "value": description, "cuda_ipc": entries}, [])
channel.receive()

entries = [{"handle": "5a" * 64, "offset": 0, "bytes": sizes[0]}]
channel._send_frame({"case": "nothing", "value": description, "cuda_ipc": entries}, [])
channel.receive()
channel.send({"case": "after"}, [torch.full((1 << 19,), 2.0, device="cuda")], has_value=True, on_gpu=True)
channel.receive()
# Small outputs (under the memory file's 1 MiB) go by the socket through host copies made one
# after another: each must arrive with its own bytes.
channel.send({"case": "small"}, [torch.full((64, 1, 128), float(i), device="cuda") for i in range(4)],
             has_value=True, on_gpu=True)
channel.receive()
# A strided value is sent as a contiguous copy made for the send; its memory must stay this
# value's while the receiver copies it, even when the sender allocates the same size at once.
channel.send({"case": "strided"}, torch.arange(1 << 20, dtype=torch.float32, device="cuda").view(1024, 1024).t(),
             has_value=True, on_gpu=True)
scribbles = [torch.full((1024, 1024), -1.0, device="cuda") for _ in range(4)]
torch.cuda.synchronize()
channel.receive()
"""


class CudaIpcTest(unittest.TestCase):
    def test_values_arrive_whole_and_false_entries_are_refused(self):
        mine, theirs = socket.socketpair()
        receiver = Channel(mine)
        self.addCleanup(receiver.close)
        child = subprocess.Popen([sys.executable, "-c", SENDER, str(theirs.fileno())], pass_fds=[theirs.fileno()])
        theirs.close()
        self.addCleanup(child.kill)

        header, value = receiver.receive("cuda", on_gpu=True)
        self.assertEqual((header, receiver.last_value_path), ({"case": "whole"}, "gpu"))
        big = torch.arange(1 << 24, dtype=torch.float32, device="cuda")
        self.assertTrue(torch.equal(value["big"], big.view(4096, 4096)))
        self.assertTrue(torch.equal(value["tail"], big[1 << 20:]))
        self.assertTrue(torch.equal(value["even"], big[:1000].remainder(2) == 0))
        self.assertEqual(value["count"], 7)
        # The receiver's own copies: not a view into the sender's memory.
        self.assertNotEqual(value["big"].untyped_storage().data_ptr(), value["tail"].untyped_storage().data_ptr())
        receiver.send({"done": True})

        with self.assertRaises(ProtocolError) as caught:
            receiver.receive("cuda", on_gpu=True)
        self.assertIn("reaches past the allocation", str(caught.exception))
        receiver.send({"done": True})

        with self.assertRaises(ProtocolError) as caught:
            receiver.receive("cuda", on_gpu=True)
        self.assertIn("cuIpcOpenMemHandle failed", str(caught.exception))
        receiver.send({"done": True})

        header, value = receiver.receive("cuda", on_gpu=True)
        self.assertEqual(header, {"case": "after"})
        self.assertTrue(torch.equal(value[0], torch.full((1 << 19,), 2.0, device="cuda")))
        receiver.send({"done": True})

        header, value = receiver.receive("cuda", on_gpu=True)
        self.assertEqual((header, receiver.last_value_path), ({"case": "small"}, "stream"))
        self.assertEqual([t.unique().tolist() for t in value], [[0.0], [1.0], [2.0], [3.0]])
        receiver.send({"done": True})

        time.sleep(1.0)  # the sender allocates and writes the same size meanwhile
        header, value = receiver.receive("cuda", on_gpu=True)
        self.assertEqual((header, receiver.last_value_path), ({"case": "strided"}, "gpu"))
        expected = torch.arange(1 << 20, dtype=torch.float32, device="cuda").view(1024, 1024).t()
        self.assertTrue(torch.equal(value, expected))
        receiver.send({"done": True})
        self.assertEqual(child.wait(timeout=60), 0)


if __name__ == "__main__":
    if not torch.cuda.is_available():
        print("SKIPPED: no CUDA device")
        sys.exit(77)
    unittest.main()
