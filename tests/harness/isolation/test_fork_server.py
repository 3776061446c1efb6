"""The warm server's channel: requests in order, a cancel or a lane's grant found only for the
request it names; and the relay of a stage child's ask for its GPU's lane alone, whose wait does
not count against the stage's timeout."""
import json
import os
import socket
import time
import unittest

from kwb_harness import fork_server
from kwb_harness.fork_server import _Channel, _LaneRelay, _wait
from kwb_harness.stages import stage_child
from kwb_harness.timing import timed_lane


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

    def test_a_grant_is_found_for_its_own_request_only(self):
        self.send({"lane_granted": 4}, {"id": 5, "stage": "profile"})
        self.assertFalse(self.channel.grant_arrived(5))
        self.assertFalse(self.channel.cancel_arrived(4), "a grant is not a cancel")
        self.assertTrue(self.channel.grant_arrived(4))
        self.assertFalse(self.channel.grant_arrived(4), "a grant counts once")
        self.assertEqual(json.loads(self.channel.next_line(1.0))["id"], 5)

    def test_a_line_split_across_reads_and_the_end_of_input(self):
        self.engine.sendall(b'{"id": 3, "st')
        self.assertIsNone(self.channel.next_line(0.05))
        self.engine.sendall(b'age": "profile"}\n')
        self.assertEqual(json.loads(self.channel.next_line(1.0))["id"], 3)
        self.engine.close()
        with self.assertRaises(EOFError):
            self.channel.next_line(1.0)


class LaneRelayTest(unittest.TestCase):
    """A child that asks for the lane alone, waits for the grant, then reports its result: the
    server asks the engine and passes the grant on, and the time until the grant is not the
    stage's."""

    def setUp(self):
        self.engine, server = socket.socketpair()
        self.addCleanup(self.engine.close)
        self.addCleanup(server.close)
        self.channel = _Channel(server.fileno())
        saved = fork_server._channel
        fork_server._channel = server.fileno()
        self.addCleanup(setattr, fork_server, "_channel", saved)

    def fork_asking_child(self):
        done_read, done_write = os.pipe()
        grant_read, grant_write = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(done_read)
                os.close(grant_write)
                timed_lane.connect(done_write, grant_read)
                timed_lane.take()
                timed_lane.take()  # once per stage: no second ask
                os.write(done_write, stage_child.RESULT_WRITTEN)
                time.sleep(30)
            finally:
                os._exit(0)
        os.close(done_write)
        os.close(grant_read)
        self.addCleanup(os.close, done_read)
        return pid, done_read, grant_write

    def test_the_wait_for_the_grant_is_not_the_stages_time(self):
        pid, done_read, grant_write = self.fork_asking_child()
        relay = _LaneRelay(9, grant_write, self.channel)
        self.engine.settimeout(5.0)

        def engine_grants_late():
            ask = json.loads(self.engine.recv(4096).decode().splitlines()[0])
            self.assertEqual(ask, {"id": 9, "lane": "timed"})
            time.sleep(1.5)  # three times the stage's timeout below
            self.engine.sendall(json.dumps({"lane_granted": 9}).encode() + b"\n")

        import threading

        engine = threading.Thread(target=engine_grants_late)
        engine.start()
        started = time.monotonic()
        outcome, dying = _wait(pid, 0.5, done_fd=done_read, lane=relay)
        engine.join()
        os.close(grant_write)
        self.assertEqual(outcome, {"status": "exited", "code": 0})
        self.assertTrue(dying)
        os.waitpid(pid, 0)
        self.assertGreaterEqual(time.monotonic() - started, 1.5)
        self.assertGreaterEqual(relay.waited_s, 1.4)

    def test_a_child_waiting_for_its_grant_does_not_time_out_and_a_cancel_ends_it(self):
        pid, done_read, grant_write = self.fork_asking_child()
        relay = _LaneRelay(10, grant_write, self.channel)
        started = time.monotonic()
        # The engine never answers: the child waits; the stage's timeout does not run meanwhile,
        # so only a cancel ends it.
        cancel_after = started + 1.0
        outcome, _ = _wait(pid, 0.3, done_fd=done_read, lane=relay,
                           cancelled=lambda: time.monotonic() > cancel_after)
        os.close(grant_write)
        self.assertEqual(outcome, {"status": "cancelled"})
        self.assertGreaterEqual(time.monotonic() - started, 1.0)


if __name__ == "__main__":
    unittest.main()
