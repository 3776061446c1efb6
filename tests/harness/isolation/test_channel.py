"""The channel between the judge and the candidate's process: values arrive as they were sent,
large ones through a sealed memory file, and nothing a sender puts on the wire (a descriptor that
is not a sealed memory file, sizes that do not add up, descriptors it should not send) gets past
the receiver or stays open in it."""

import json
import os
import socket
import struct
import subprocess
import sys
import unittest

import torch

from kwb_harness.isolation import channel as channel_module
from kwb_harness.isolation import shared_values, wire_values
from kwb_harness.isolation.channel import Channel, ProtocolError

LARGE = 3 << 20  # bytes: above the memory-file threshold


def open_descriptors() -> set:
    # Without the descriptor that listed the folder (closed by the time of the check).
    return {fd for fd in os.listdir("/proc/self/fd") if os.path.exists(f"/proc/self/fd/{fd}")}


class ReadSpy:
    """Counts the values that arrived through a memory file."""

    def __init__(self, test):
        self.count = 0
        real = shared_values.read

        def spy(fd, sizes):
            self.count += 1
            return real(fd, sizes)

        channel_module.shared_values.read = spy
        test.addCleanup(setattr, channel_module.shared_values, "read", real)


class ChannelTest(unittest.TestCase):
    def setUp(self):
        a, b = socket.socketpair()
        self.sender, self.receiver = Channel(a), Channel(b)
        self.raw = a
        self.addCleanup(self.sender.close)
        self.addCleanup(self.receiver.close)

    def round_trip(self, value):
        self.sender.send({"op": "fetch"}, value, has_value=True)
        header, received = self.receiver.receive()
        self.assertEqual(header, {"op": "fetch"})
        return received

    def test_small_values_come_through_the_stream(self):
        spy = ReadSpy(self)
        value = {"a": [torch.arange(6, dtype=torch.int16).reshape(2, 3), 4, "x", None],
                 "b": (torch.tensor([True, False]), torch.empty(0, 5), 2.5)}
        got = self.round_trip(value)
        self.assertEqual(spy.count, 0)
        self.assertTrue(torch.equal(got["a"][0], value["a"][0]))
        self.assertEqual(got["a"][1:], [4, "x", None])
        self.assertIsInstance(got["b"], tuple)
        self.assertTrue(torch.equal(got["b"][0], value["b"][0]))
        self.assertEqual(tuple(got["b"][1].shape), (0, 5))
        self.assertEqual(got["b"][2], 2.5)

    def test_each_streamed_buffer_holds_its_own_tensor(self):
        # A GPU output goes to the stream through a host copy made for it: a temporary. Made one
        # after another, each copy must keep its bytes; a view that did not hold its copy showed
        # the last one's bytes in every output of a fetch (the allocator reused the memory).
        views = [wire_values.tensor_buffer(torch.full((8192,), float(i))) for i in range(4)]
        for i, view in enumerate(views):
            self.assertEqual(torch.frombuffer(bytearray(view), dtype=torch.float32).unique().tolist(), [float(i)])
        # Every dtype the wire carries, a scalar included.
        for t in (torch.tensor(2.5, dtype=torch.bfloat16), torch.tensor([True, False]), torch.zeros(3, dtype=torch.complex64)):
            self.assertEqual(bytes(wire_values.tensor_buffer(t.clone())), bytes(wire_values.byte_view(t).numpy()))

    def test_large_values_come_through_a_sealed_memory_file(self):
        spy = ReadSpy(self)
        big = torch.randn(LARGE // 4)
        strided = torch.randn(512, 1024).t()  # not contiguous: sent as its values in order
        before = open_descriptors()
        got = self.round_trip([big, strided, torch.ones(3, dtype=torch.float64)])
        self.assertEqual(spy.count, 1)
        self.assertTrue(torch.equal(got[0], big))
        self.assertTrue(torch.equal(got[1], strided))
        self.assertTrue(torch.equal(got[2], torch.ones(3, dtype=torch.float64)))
        # The received tensors are the judge's to change, and changing them changes no file.
        got[0].add_(1)
        self.assertTrue(torch.equal(got[0], big + 1))
        # Dropped, the tensors release the file at once (not at the next garbage collection).
        del got
        self.assertEqual(open_descriptors(), before)

    def test_the_memory_file_cannot_be_changed_after_it_is_sent(self):
        fd = shared_values.write([torch.ones(LARGE // 4)], [LARGE])
        self.assertIsNotNone(fd)
        self.addCleanup(os.close, fd)
        with self.assertRaises(PermissionError):
            os.pwrite(fd, b"\0" * 8, 0)
        with self.assertRaises(PermissionError):
            os.ftruncate(fd, 8)

    def test_without_a_memory_file_large_values_are_streamed(self):
        # A sender whose file size limit is below the value cannot make the memory file. (Its own
        # process: a fork of this one would inherit torch's thread pools mid-flight.)
        script = (
            "import resource, signal, socket, sys, torch\n"
            "from kwb_harness.isolation.channel import Channel\n"
            "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
            "resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 16, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))\n"
            "sock = socket.socket(fileno=int(sys.argv[1]))\n"
            f"Channel(sock).send({{'op': 'fetch'}}, [torch.full(({LARGE // 4},), 7.0)], has_value=True)\n")
        child = subprocess.Popen([sys.executable, "-c", script, str(self.raw.fileno())], pass_fds=[self.raw.fileno()])
        spy = ReadSpy(self)
        header, got = self.receiver.receive()
        self.assertEqual(child.wait(timeout=60), 0)
        self.assertEqual(spy.count, 0)
        self.assertTrue(torch.equal(got[0], torch.full((LARGE // 4,), 7.0)))

    # -- what a hostile sender can put on the wire ------------------------------------------

    def send_frame(self, header: dict, payload: bytes = b"", fds=()):
        data = json.dumps(header).encode()
        start = struct.pack("<QQ", len(data), len(payload)) + data + payload
        if fds:
            socket.send_fds(self.raw, [start], list(fds))
        else:
            self.raw.sendall(start)

    @staticmethod
    def description(size: int) -> dict:
        return {"list": [{"tensor": 0, "dtype": "uint8", "shape": [size]}]}

    def assert_refused(self, fragment: str):
        before = open_descriptors()
        with self.assertRaises(ProtocolError) as caught:
            self.receiver.receive()
        self.assertIn(fragment, str(caught.exception))
        self.assertEqual(open_descriptors(), before)

    def memory_file(self, size: int, seal: bool = True) -> int:
        fd = os.memfd_create("test", os.MFD_ALLOW_SEALING)
        os.ftruncate(fd, size)
        if seal:
            import fcntl
            fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_WRITE | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW)
        self.addCleanup(os.close, fd)
        return fd

    def test_a_shared_value_without_its_file_is_refused(self):
        self.send_frame({"value": self.description(LARGE), "shared": LARGE})
        self.assert_refused("without its memory file")

    def test_a_pipe_in_place_of_the_memory_file_is_refused(self):
        read_end, write_end = os.pipe()
        self.addCleanup(os.close, read_end)
        self.addCleanup(os.close, write_end)
        self.send_frame({"value": self.description(LARGE), "shared": LARGE}, fds=[read_end])
        self.assert_refused("not a memory file")

    def test_an_unsealed_memory_file_is_refused(self):
        self.send_frame({"value": self.description(LARGE), "shared": LARGE}, fds=[self.memory_file(LARGE, seal=False)])
        self.assert_refused("not sealed")

    def test_a_memory_file_smaller_than_announced_is_refused(self):
        self.send_frame({"value": self.description(LARGE), "shared": LARGE}, fds=[self.memory_file(LARGE // 2)])
        self.assert_refused("smaller than the value")

    def test_sizes_that_do_not_add_up_are_refused(self):
        self.send_frame({"value": self.description(LARGE), "shared": LARGE - 1}, fds=[self.memory_file(LARGE)])
        self.assert_refused("announces")

    def test_a_shared_value_with_bytes_in_the_frame_too_is_refused(self):
        self.send_frame({"value": self.description(4), "shared": 4}, payload=b"abcd", fds=[self.memory_file(4)])
        self.assert_refused("bytes in the frame too")

    # -- the GPU path: only when asked for, and only well-formed entries reach the driver -----

    def gpu_entries(self, count: int = 1, size: int = LARGE) -> list:
        return [{"handle": "ab" * 64, "offset": 0, "bytes": size}] * count

    def test_a_gpu_value_that_was_not_asked_for_is_refused(self):
        self.send_frame({"value": self.description(LARGE), "cuda_ipc": self.gpu_entries()})
        with self.assertRaises(ProtocolError) as caught:
            self.receiver.receive("cuda")
        self.assertIn("not asked for", str(caught.exception))

    def test_malformed_gpu_entries_are_refused_before_the_driver_is_called(self):
        called = []
        self.addCleanup(setattr, channel_module.cuda_ipc, "_cuda", channel_module.cuda_ipc._cuda)
        channel_module.cuda_ipc._cuda = lambda: called.append(1)
        cases = {
            "do not match": self.gpu_entries(count=2),
            "not the one its description announces": self.gpu_entries(size=LARGE - 1),
            "malformed GPU value entry": [{"handle": "ab" * 10, "offset": 0, "bytes": LARGE}],
            "malformed GPU value handle": [{"handle": "zz" * 64, "offset": 0, "bytes": LARGE}],
            "malformed GPU value entry ": [{"handle": "ab" * 64, "offset": -4, "bytes": LARGE}],
        }
        for fragment, entries in cases.items():
            self.send_frame({"value": self.description(LARGE), "cuda_ipc": entries})
            with self.assertRaises(ProtocolError) as caught:
                self.receiver.receive("cuda", on_gpu=True)
            self.assertIn(fragment.strip(), str(caught.exception))
        self.send_frame({"value": self.description(LARGE), "cuda_ipc": self.gpu_entries(), "shared": LARGE},
                        fds=[self.memory_file(LARGE)])
        with self.assertRaises(ProtocolError) as caught:
            self.receiver.receive("cuda", on_gpu=True)
        self.assertIn("or a memory file too", str(caught.exception))
        self.assertEqual(called, [])
        # The stream is still in step: the next value arrives.
        self.assertTrue(torch.equal(self.round_trip([torch.ones(8)])[0], torch.ones(8)))

    def test_values_off_the_gpu_take_the_memory_file_when_the_gpu_path_is_asked_for(self):
        spy = ReadSpy(self)
        value = [torch.full((LARGE // 4,), 3.0)]
        self.sender.send({"op": "fetch"}, value, has_value=True, on_gpu=True)
        _, got = self.receiver.receive(on_gpu=True)
        self.assertEqual((spy.count, self.receiver.last_value_path), (1, "memory file"))
        self.assertTrue(torch.equal(got[0], value[0]))

    def test_descriptors_sent_with_a_plain_message_are_closed(self):
        files = [self.memory_file(8), self.memory_file(8)]
        before = open_descriptors()
        self.send_frame({"op": "ping"}, fds=files)
        header, value = self.receiver.receive()
        self.assertEqual((header, value), ({"op": "ping"}, None))
        self.assertEqual(open_descriptors(), before)
        # And the channel goes on.
        self.assertTrue(torch.equal(self.round_trip([torch.ones(LARGE // 4)])[0], torch.ones(LARGE // 4)))


if __name__ == "__main__":
    unittest.main()
