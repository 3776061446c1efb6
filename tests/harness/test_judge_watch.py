"""The judge notices being stopped, re-prioritised or moved while it times: what a candidate's
processes, which share its user and PID namespace, can do to it."""
import os
import signal
import subprocess
import sys
import time
import unittest

from kwb_harness.integrity.judge_watch import JudgeWatch


class JudgeWatchTest(unittest.TestCase):
    def test_an_undisturbed_judge_has_no_flag(self):
        watch = JudgeWatch()
        sum(range(100000))
        self.assertIsNone(watch.flag())

    def test_a_stop_by_another_process_is_counted(self):
        watch = JudgeWatch()
        # Another process stops this one and continues it, as a candidate's helper would.
        helper = subprocess.Popen([sys.executable, "-c",
                                   "import os, signal, sys, time; pid = int(sys.argv[1]); "
                                   "os.kill(pid, signal.SIGSTOP); time.sleep(0.2); os.kill(pid, signal.SIGCONT)",
                                   str(os.getpid())])
        helper.wait()
        time.sleep(0.05)  # the handler runs at the next bytecode boundary
        flag = watch.flag()
        self.assertIsNotNone(flag)
        self.assertEqual(flag["code"], "judge_disturbed")
        self.assertEqual(flag["severity"], "strict")
        self.assertIn("stopped and continued 1 time", flag["reason"])

    def test_the_stops_a_process_may_ignore_are_ignored(self):
        watch = JudgeWatch()
        os.kill(os.getpid(), signal.SIGTSTP)  # would stop a process with the default action
        self.assertIsNone(watch.flag())

    def test_a_lowered_priority_is_a_disturbance(self):
        before = os.getpriority(os.PRIO_PROCESS, 0)
        if before >= 19:
            self.skipTest("this process already has the lowest priority")
        watch = JudgeWatch()
        os.setpriority(os.PRIO_PROCESS, 0, before + 1)  # raising one's own nice value needs no rights
        self.assertIn("nice value changed", watch.flag()["reason"])

    def test_a_narrowed_cpu_set_is_a_disturbance(self):
        cpus = os.sched_getaffinity(0)
        if len(cpus) < 2:
            self.skipTest("one CPU: no narrower set to move to")
        watch = JudgeWatch()
        os.sched_setaffinity(0, {min(cpus)})
        try:
            self.assertIn("CPU affinity changed", watch.flag()["reason"])
        finally:
            os.sched_setaffinity(0, cpus)

if __name__ == "__main__":
    unittest.main()
