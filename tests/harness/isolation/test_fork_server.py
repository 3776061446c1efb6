"""The warm server's channel: requests in order, and a cancel found only for the request it names."""
import json
import socket
import unittest

from kwb_harness.fork_server import _Channel


class ChannelTest(unittest.TestCase):
    def setUp(self):
        self.engine, server = socket.socketpair()
        self.addCleanup(self.engine.close)
        self.addCleanup(server.close)
        self.channel = _Channel(server.fileno())

    def send(self, *messages):
        self.engine.sendall(b"".join(json.dumps(m).encode() + b"\n" for m in messages))

    def test_a_cancel_is_found_for_its_own_request_only(self):
        self.send({"cancel": 6})
        self.assertFalse(self.channel.cancel_arrived(7))
        self.assertTrue(self.channel.cancel_arrived(6))
        self.assertFalse(self.channel.cancel_arrived(6), "a cancel counts once")

    def test_other_lines_stay_in_order_for_the_main_loop(self):
        self.send({"id": 1, "stage": "verify"}, {"cancel": 2}, {"standby": True})
        self.assertTrue(self.channel.cancel_arrived(2))
        self.assertEqual(json.loads(self.channel.next_line(1.0)), {"id": 1, "stage": "verify"})
        self.assertEqual(json.loads(self.channel.next_line(1.0)), {"standby": True})
        self.assertIsNone(self.channel.next_line(0.05))

    def test_a_line_split_across_reads_and_the_end_of_input(self):
        self.engine.sendall(b'{"id": 3, "st')
        self.assertIsNone(self.channel.next_line(0.05))
        self.engine.sendall(b'age": "profile"}\n')
        self.assertEqual(json.loads(self.channel.next_line(1.0))["id"], 3)
        self.engine.close()
        with self.assertRaises(EOFError):
            self.channel.next_line(1.0)


if __name__ == "__main__":
    unittest.main()
