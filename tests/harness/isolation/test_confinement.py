"""A shared warm worker's stage child: writes only into its own workspace's folders."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from kwb_harness.isolation import confinement


def run_forked(body) -> int:
    """Runs ``body`` in a forked child (Landlock cannot be undone in this process); its exit code."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            code = body()
        except BaseException as exc:  # noqa: BLE001 - reported through the exit code
            sys.stderr.write(f"{type(exc).__name__}: {exc}\n")
            code = 2
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def can_write(path: str) -> bool:
    try:
        with open(path, "w") as f:
            f.write("x")
        return True
    except PermissionError:
        return False


class ConfinementTest(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="kwb-confine-")
        self.addCleanup(shutil.rmtree, self.root, True)
        self.own = os.path.join(self.root, "runs", "ws-a")
        self.build = os.path.join(self.root, "workspaces", "a", "build")
        self.sibling = os.path.join(self.root, "workspaces", "b")
        for folder in (self.own, self.build, self.sibling):
            os.makedirs(folder)
        self.workspace = os.path.dirname(self.build)
        self.protected = os.path.join(self.workspace, "model.py")
        with open(self.protected, "w") as f:
            f.write("reference\n")
        self.spec = {"cwd": self.workspace, "landlock": True,
                     "environment": {"HOME": self.own, "KWB_PROBE": "a"},
                     "writable": [self.own, self.build]}

    def test_writes_stay_inside_the_stages_own_folders(self):
        if confinement.landlock_abi() < 1:
            self.skipTest("this kernel has no Landlock (the refusal is tested below)")
        sibling_file = os.path.join(self.sibling, "planted.py")
        own_file = os.path.join(self.build, "kernel.so")

        def body():
            confinement.enter(self.spec)
            checks = [
                os.getcwd() == self.workspace,
                os.environ["KWB_PROBE"] == "a",
                os.environ["TMPDIR"] == os.path.join(self.own, "tmp"),
                tempfile.gettempdir() == os.path.join(self.own, "tmp"),
                can_write(own_file),
                can_write(os.path.join(self.own, "scratch.txt")),
                not can_write(sibling_file),
                not can_write(os.path.join(self.workspace, "model_new.py")),
            ]
            try:
                os.truncate(self.protected, 0)
                checks.append(False)
            except PermissionError:
                checks.append(True)
            try:
                os.rename(own_file, os.path.join(self.sibling, "moved.so"))
                checks.append(False)
            except PermissionError:
                checks.append(True)
            # Inherited by what the stage starts: a compiler, a shell the candidate spawns.
            shell = subprocess.run(["sh", "-c", f"echo x > {sibling_file}"], capture_output=True)
            checks.append(shell.returncode != 0)
            with open(os.devnull, "w") as null:
                null.write("device nodes stay writable")
            # So does /proc, which the CUDA driver writes while it starts (without it,
            # cudaGetDeviceCount failed with error 304 on an H200 host).
            with open("/proc/self/comm", "w") as comm:
                comm.write("kwb-stage")
            failed = [index for index, ok in enumerate(checks) if not ok]
            if failed:
                sys.stderr.write(f"failed checks: {failed}\n")
            return 0 if not failed else 3

        self.assertEqual(run_forked(body), 0)
        self.assertFalse(os.path.exists(sibling_file))
        with open(self.protected) as f:
            self.assertEqual(f.read(), "reference\n")
        # The parent (the server) is not confined by its child's restriction.
        self.assertTrue(can_write(sibling_file))

    def test_without_landlock_a_confined_stage_refuses_to_run(self):
        if confinement.landlock_abi() >= 1:
            # The refusal path, reached by pretending the kernel has none.
            original = confinement.landlock_abi
            confinement.landlock_abi = lambda: 0
            self.addCleanup(setattr, confinement, "landlock_abi", original)
        with self.assertRaises(confinement.ConfinementError):
            confinement.restrict_writes([self.own])

    def test_an_unshared_stage_only_moves_into_its_workspace(self):
        def body():
            confinement.enter(dict(self.spec, landlock=False))
            ok = os.getcwd() == self.workspace and can_write(os.path.join(self.sibling, "x"))
            return 0 if ok and "TMPDIR" not in os.environ else 3

        os.environ.pop("TMPDIR", None)
        self.assertEqual(run_forked(body), 0)

    def test_malformed_confinement_is_refused(self):
        with self.assertRaises(confinement.ConfinementError):
            confinement.enter(["not", "an", "object"])
        confinement.enter(None)  # nothing asked, nothing done


if __name__ == "__main__":
    unittest.main()
