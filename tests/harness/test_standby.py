"""Stage preparations made ahead of the request, and the warm worker's standby children (CPU)."""
import json
import os
import select
import shutil
import socket
import tempfile
import time
import unittest

from kwb_harness import PROTOCOL_VERSION, fork_server
from kwb_harness.fork_server import _Channel, _Server, _wait
from kwb_harness.request import parse
from kwb_harness.stages import verify
from kwb_harness.stages.standby import Standby
from kwb_harness.stages.warm_inputs import warm_inputs

TASK = '''import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return x * 2.0

def get_inputs():
    return [torch.randn(4, 8)]

def get_init_inputs():
    return []
'''

CANDIDATE = '''import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, x):
        return x + x
'''


class StandbyWorkspace(unittest.TestCase):
    """A task, a candidate and a verify request for them in a folder of their own."""

    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="kwb-standby-")
        self.reference = os.path.join(self.root, "model.py")
        self.candidate = os.path.join(self.root, "model_new.py")
        with open(self.reference, "w") as f:
            f.write(TASK)
        with open(self.candidate, "w") as f:
            f.write(CANDIDATE)
        self.data = {"version": PROTOCOL_VERSION, "stage": "verify", "workspace": self.root,
                     "reference": self.reference, "candidate": self.candidate, "device": "cpu", "seed": 7,
                     "checks": 2, "cache_dir": os.path.join(self.root, "cache")}

    def tearDown(self):
        shutil.rmtree(self.root, ignore_errors=True)

    def message(self, name: str) -> dict:
        request = os.path.join(self.root, f"{name}-request.json")
        with open(request, "w") as f:
            json.dump(self.data, f)
        return {"stage": "verify", "request": request, "result": os.path.join(self.root, f"{name}-result.json"),
                "log": os.path.join(self.root, f"{name}-log.txt")}

    def go(self, standby: Standby, message: dict) -> dict:
        """Hands `message` to the standby child; its result, which must be a success."""
        self.assertTrue(standby.start(message))
        _, status = os.waitpid(standby.pid, 0)
        self.assertEqual(os.waitstatus_to_exitcode(status), 0)
        with open(message["result"]) as f:
            result = json.load(f)
        self.assertTrue(result["ok"], result.get("error"))
        return result


class StandbyTest(StandbyWorkspace):
    def test_a_preparation_fits_only_the_same_request_and_task_content(self):
        prepared = verify.prepare(parse(self.data, "verify"))
        self.assertTrue(prepared.fits(parse(self.data, "verify")))
        # Another candidate file is what a preparation is for.
        other_candidate = os.path.join(self.root, "other_new.py")
        shutil.copy(self.candidate, other_candidate)
        self.assertTrue(prepared.fits(parse(dict(self.data, candidate=other_candidate), "verify")))
        # The judge's threads are the engine's share of the cores when the request comes.
        self.assertTrue(prepared.fits(parse(dict(self.data, cpu_threads=3), "verify")))
        # Other settings, or a task file with new content, are not.
        self.assertFalse(prepared.fits(parse(dict(self.data, checks=3), "verify")))
        self.assertFalse(prepared.fits(parse(dict(self.data, seed=8), "verify")))
        with open(self.reference, "a") as f:
            f.write("\n# edited\n")
        self.assertFalse(prepared.fits(parse(self.data, "verify")))

    def test_a_standby_child_runs_the_stage_on_its_preparation(self):
        standby = Standby("verify", self.data, None, [])
        message = self.message("go")
        self.assertTrue(standby.fits("verify", self.data))
        self.assertFalse(standby.fits("verify", dict(self.data, checks=4)))
        # Another workspace's request, confined otherwise, gets a fresh child.
        self.assertFalse(standby.fits("verify", self.data, {"cwd": "/elsewhere"}))
        result = self.go(standby, message)
        self.assertTrue(result["correct"])
        self.assertEqual(result["checks_passed"], 2)
        self.assertTrue(result["prepared"]["ahead_of_request"])
        self.assertIn("references", result["prepared"]["phase_seconds"])
        # The stage's own time starts at the request: the references are not in it.
        self.assertNotIn("references", result["phase_seconds"])
        # The judge's output goes into the result, not the log file, which the candidate's
        # process could read while the stage runs.
        self.assertIn("prepared before the request", result["log"])
        with open(message["log"]) as f:
            self.assertNotIn("prepared before the request", f.read())

    def test_the_result_says_how_long_the_request_waited_for_the_preparation(self):
        # A reference whose import takes a second: the go message comes while it is prepared,
        # as an edit does that follows the last result at once.
        with open(self.reference, "w") as f:
            f.write("import time\ntime.sleep(1.0)\n" + TASK)
        early = self.go(Standby("verify", self.data, None, []), self.message("early"))
        self.assertTrue(early["correct"])
        self.assertGreater(early["prepared"]["request_waited_seconds"], 0.5)
        self.assertIn("the request waited", early["log"])
        # Handed over long after the preparation finished, it waited for nothing.
        standby = Standby("verify", self.data, None, [])
        time.sleep(8.0)
        late = self.go(standby, self.message("late"))
        self.assertEqual(late["prepared"]["request_waited_seconds"], 0.0)

    def test_the_go_messages_thread_count_is_the_one_the_stage_runs_with(self):
        standby = Standby("verify", dict(self.data, cpu_threads=2), None, [])
        self.data["cpu_threads"] = 1
        message = self.message("threads")
        self.assertTrue(standby.fits("verify", self.data), "the thread count is not the preparation's")
        result = self.go(standby, message)
        self.assertTrue(result["prepared"]["ahead_of_request"])
        self.assertEqual(result["environment"]["torch_threads"], 1)

    def test_a_go_message_without_the_secret_ends_the_child_unused(self):
        standby = Standby("verify", self.data, None, [])
        message = self.message("forged")
        os.write(standby.go_fd, (json.dumps(message) + "\n").encode())
        _, status = os.waitpid(standby.pid, 0)
        self.assertEqual(os.waitstatus_to_exitcode(status), 4)
        self.assertFalse(os.path.exists(message["result"]))
        # The server then sees it gone and forks a fresh child instead.
        self.assertFalse(standby.start(self.message("late")))
        standby.discard(lambda pid: None)

    def test_a_stale_preparation_is_not_used(self):
        standby = Standby("verify", self.data, None, [])
        # The task changes after the standby prepared (or while it did): the run starts afresh
        # and judges the candidate against the new task.
        with open(self.reference, "w") as f:
            f.write(TASK.replace("x * 2.0", "x * 3.0"))
        message = self.message("stale")
        self.assertTrue(standby.start(message))
        _, status = os.waitpid(standby.pid, 0)
        self.assertEqual(os.waitstatus_to_exitcode(status), 0)
        with open(message["result"]) as f:
            result = json.load(f)
        self.assertFalse(result["correct"])
        self.assertEqual(result["error"]["kind"], "numerical_mismatch")

    def test_a_started_child_whose_prepared_line_was_never_read_returns_its_result(self):
        # A standby the engine did not wait for (no id): the server never read the child's
        # PREPARED, so the stage's wait meets it first on the pipe.
        standby = Standby("verify", self.data, None, [])
        readable, _, _ = select.select([standby.done_fd], [], [], 60.0)
        self.assertTrue(readable, "the child never said that its preparation is made")
        message = self.message("unread")
        self.assertTrue(standby.start(message))
        done_fd = standby.take_done_fd()
        try:
            outcome, dying = _wait(standby.pid, 60.0, done_fd=done_fd)
        finally:
            os.close(done_fd)
            os.close(standby.take_go_fd())
        self.assertEqual(outcome, {"status": "exited", "code": 0})
        self.assertTrue(dying, "the wait ended at the child's exit, not at its result")
        os.waitpid(standby.pid, 0)
        with open(message["result"]) as f:
            result = json.load(f)
        self.assertTrue(result["correct"], result.get("error"))
        self.assertTrue(result["prepared"]["ahead_of_request"])


class ServerStandbyTest(StandbyWorkspace):
    """The server's standby with an id: the engine holds the device's lane until the reply, so
    the reply must come only once no standby child is still preparing."""

    def setUp(self):
        super().setUp()
        # The reference takes a second to import in the standby children only: the server's own
        # import (its inputs' warm-up) is this process's.
        with open(self.reference, "w") as f:
            f.write(f"import os, time\nif os.getpid() != {os.getpid()}:\n    time.sleep(1.0)\n" + TASK)
        self.engine, server_end = socket.socketpair()
        self.addCleanup(self.engine.close)
        self.addCleanup(server_end.close)
        self.channel = _Channel(server_end.fileno())
        saved = fork_server._channel
        fork_server._channel = server_end.fileno()  # the stage children close it
        self.addCleanup(setattr, fork_server, "_channel", saved)
        self.server = _Server()
        self.addCleanup(self.server.close)
        self.server._last["verify"] = (self.data, None)  # what the last evaluation's verify asked
        # The server's own first warm-up imports torch and the harness's stages: not the wait.
        warm_inputs(self.data, "verify")

    def gone(self, pid: int) -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False

    def test_the_reply_comes_once_the_children_are_prepared(self):
        reply = self.server.stand_by(60.0, self.channel, 5)
        standby = self.server._standby["verify"]
        self.assertGreaterEqual(time.monotonic() - standby.forked_at, 0.9, "replied while the child imported")
        self.assertEqual(reply["standby"], ["verify"])
        self.assertEqual(reply["prepared"], ["verify"])
        self.assertTrue(standby.prepared)
        # Asked again, the child forked before counts as prepared without a new fork.
        again = self.server.stand_by(60.0, self.channel, 6)
        self.assertEqual(again["standby"], [])
        self.assertEqual(again["prepared"], ["verify"])
        self.assertLess(again["seconds"], 0.5)
        # The next request runs on that child: the server read its PREPARED and nothing more.
        message = self.message("next")
        outcome = self.server.serve(dict(message, id=7, timeout_s=60), self.channel)
        self.assertTrue(outcome["standby"])
        self.assertEqual(outcome["status"], "exited")
        with open(message["result"]) as f:
            result = json.load(f)
        self.assertTrue(result["correct"], result.get("error"))
        self.assertEqual(result["prepared"]["request_waited_seconds"], 0.0)

    def test_a_preparation_that_outlives_the_timeout_is_killed_and_not_listed(self):
        started = time.monotonic()
        reply = self.server.stand_by(0.3, self.channel, 5)
        self.assertLess(time.monotonic() - started, 0.9)
        self.assertEqual(reply["standby"], ["verify"])
        self.assertEqual(reply["prepared"], [])
        self.assertNotIn("verify", self.server._standby, "a request would find it still preparing")
        self.assertEqual(fork_server._descendants(os.getpid()), [], "the child outlived the reply")

    def test_a_cancel_ends_the_wait_and_the_preparation(self):
        self.engine.sendall(json.dumps({"cancel": 4}).encode() + b"\n")  # another request's
        self.engine.sendall(json.dumps({"cancel": 5}).encode() + b"\n")
        started = time.monotonic()
        reply = self.server.stand_by(60.0, self.channel, 5)
        self.assertLess(time.monotonic() - started, 0.9)
        self.assertEqual(reply["prepared"], [])
        self.assertNotIn("verify", self.server._standby)
        self.assertEqual(fork_server._descendants(os.getpid()), [])
        self.assertEqual(json.loads(self.channel.next_line(0.1)), {"cancel": 4})

    def test_without_an_id_the_server_does_not_wait(self):
        started = time.monotonic()
        self.assertEqual(self.server.stand_by(), {"standby": ["verify"]})
        self.assertLess(time.monotonic() - started, 0.5)
        pid = self.server._standby["verify"].pid
        self.server.close()
        self.assertTrue(self.gone(pid))


if __name__ == "__main__":
    unittest.main()
