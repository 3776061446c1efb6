"""Stages read bytecode only from the interpreter's installation: a .pyc planted beside a clean
.py in a folder the candidate writes never runs, and the installation's modules keep theirs."""
import os
import py_compile
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

HARNESS = os.path.dirname(os.path.dirname(os.path.abspath(__import__("kwb_harness").__file__)))
BOOTSTRAP = os.path.join(HARNESS, "kwb_stage.py")

from kwb_harness.isolation import bytecode_policy  # noqa: E402


def plant_matching_bytecode(folder: str, name: str, clean: str, planted: str) -> None:
    """Writes NAME.py with `clean` and, in __pycache__, bytecode compiled from `planted` that
    records the clean file's size and modification time, so that a standard import runs it."""
    source = os.path.join(folder, name + ".py")
    with open(source, "w") as f:
        f.write(planted)
    py_compile.compile(source, cfile=__import__("importlib.util").util.cache_from_source(source),
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    with open(source, "w") as f:
        f.write(clean)


def cache_path(cache: str, source: str) -> str:
    """Where a bytecode cache rooted at `cache` (sys.pycache_prefix) keeps `source`'s bytecode."""
    import importlib.util
    saved = sys.pycache_prefix
    sys.pycache_prefix = cache
    try:
        path = importlib.util.cache_from_source(source)
    finally:
        sys.pycache_prefix = saved
    os.makedirs(os.path.dirname(path), exist_ok=True)
    return path


class BytecodePolicyTest(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.mkdtemp(prefix="kwb-bytecode-")

    def stage_environment(self) -> dict:
        """A stage's: the folder on sys.path (PYTHONPATH) as a workspace is for its candidate, and
        its HOME and TMPDIR (the folders a stage writes, whose bytecode is never trusted) the
        folder too, so that a folder elsewhere (also below /tmp, where a checkout may lie) is
        judged by the policy alone."""
        env = dict(os.environ, PYTHONPATH=self.folder, HOME=self.folder, TMPDIR=self.folder)
        env.pop("KWB_BYTECODE_CACHE", None)
        return env

    def run_stage(self, code: str, engine_cache: str = "", write_bytecode: bool = False) -> str:
        """Runs `code` as a module through the stages' bootstrap, from the folder as working
        directory; the folder is on sys.path (PYTHONPATH) as a workspace is for its candidate.
        `engine_cache` is the engine's bytecode cache (KWB_BYTECODE_CACHE); `write_bytecode`
        leaves out -B, as the engine's fill does."""
        with open(os.path.join(self.folder, "probe_main.py"), "w") as f:
            f.write(code)
        env = self.stage_environment()
        if engine_cache:
            env["KWB_BYTECODE_CACHE"] = engine_cache
        flags = ["-B"]
        if write_bytecode:
            flags = []
            env.pop("PYTHONDONTWRITEBYTECODE", None)
        done = subprocess.run([sys.executable, *flags, BOOTSTRAP, "probe_main"], cwd=self.folder, env=env,
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(done.returncode, 0, done.stderr)
        return done.stdout

    def test_planted_bytecode_beside_a_clean_source_does_not_run(self):
        plant_matching_bytecode(self.folder, "helper", "VALUE = 'clean'\n", "VALUE = 'planted'\n")
        out = self.run_stage("import helper\nprint(helper.VALUE)\n")
        self.assertEqual(out.strip(), "clean")

    def test_a_lone_bytecode_file_is_not_a_module(self):
        source = os.path.join(self.folder, "lonely.py")
        with open(source, "w") as f:
            f.write("VALUE = 'from bytecode'\n")
        py_compile.compile(source, cfile=os.path.join(self.folder, "lonely.pyc"))
        os.unlink(source)
        out = self.run_stage("try:\n    import lonely\n    print(lonely.VALUE)\nexcept ImportError:\n"
                             "    print('not importable')\n")
        self.assertEqual(out.strip(), "not importable")

    def test_the_installation_keeps_its_bytecode(self):
        # A standard-library module that is not loaded at start-up, imported after the hook.
        out = self.run_stage(textwrap.dedent("""
            import sys
            import fractions
            print(type(fractions.__spec__.loader).__name__, fractions.__cached__ is not None,
                  sys.pycache_prefix)
        """))
        self.assertEqual(out.split(), ["SourceFileLoader", "True", "None"])

    def test_the_engine_cache_holds_the_installations_bytecode(self):
        cache = tempfile.mkdtemp(prefix="kwb-engine-cache-")
        probe = textwrap.dedent("""
            import os, sys
            import fractions
            print(sys.pycache_prefix, fractions.__cached__)
        """)
        prefix, cached = self.run_stage(probe, engine_cache=cache, write_bytecode=True).split()
        self.assertEqual(prefix, cache)
        self.assertTrue(cached.startswith(cache + os.sep), cached)
        self.assertTrue(os.path.isfile(cached), "the fill's import wrote no bytecode into the cache")
        # A stage (-B) writes nothing there.
        before = sorted(os.path.join(d, f) for d, _, files in os.walk(cache) for f in files)
        self.assertEqual(self.run_stage(probe, engine_cache=cache).split(), [cache, cached])
        after = sorted(os.path.join(d, f) for d, _, files in os.walk(cache) for f in files)
        self.assertEqual(before, after)

    def test_a_stage_runs_the_installations_modules_from_the_engine_cache(self):
        # Marked bytecode for a standard-library module where the cache's layout puts it (an
        # unchecked-hash .pyc runs whatever its source says): the stage's import runs it.
        cache = tempfile.mkdtemp(prefix="kwb-engine-cache-")
        import colorsys
        self.assertIsNotNone(cache_path(cache, colorsys.__file__))
        marked = os.path.join(self.folder, "marked_colorsys.py")
        with open(marked, "w") as f:
            f.write("MARK = 'from the engine cache'\n")
        py_compile.compile(marked, cfile=cache_path(cache, colorsys.__file__),
                           invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
        probe = "import colorsys\nprint(getattr(colorsys, 'MARK', 'from its source'))\n"
        self.assertEqual(self.run_stage(probe, engine_cache=cache).strip(), "from the engine cache")
        self.assertEqual(self.run_stage(probe).strip(), "from its source")

    def test_bytecode_in_the_engine_cache_never_stands_in_for_a_candidate_module(self):
        # Bytecode for a candidate's helper.py where the cache's layout would put it, recording the
        # clean source's size and time, in a folder that is neither the working folder nor below
        # HOME or TMPDIR (as a KernelBench pair's candidate folder): only the installation's and
        # the harness's folders consult the cache.
        cache = tempfile.mkdtemp(prefix="kwb-engine-cache-")
        outside = tempfile.mkdtemp(prefix="kwb-candidate-", dir=os.path.dirname(os.path.abspath(__file__)))
        self.addCleanup(shutil.rmtree, outside, True)
        source = os.path.join(outside, "helper.py")
        with open(source, "w") as f:
            f.write("VALUE = 'planted'\n")
        py_compile.compile(source, cfile=cache_path(cache, source),
                           invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
        with open(source, "w") as f:
            f.write("VALUE = 'clean'\n")
        out = self.run_stage(f"import sys\nsys.path.insert(0, {outside!r})\nimport helper\nprint(helper.VALUE)\n",
                             engine_cache=cache)
        self.assertEqual(out.strip(), "clean")

    def test_the_harness_reads_bytecode_only_from_the_engine_cache(self):
        # A copy of the harness outside HOME and TMPDIR, with marked bytecode beside one module's
        # source and, in a second run, in the engine's cache.
        copy = tempfile.mkdtemp(prefix="kwb-harness-copy-", dir=os.path.dirname(os.path.abspath(__file__)))
        self.addCleanup(shutil.rmtree, copy, True)
        shutil.copytree(HARNESS, os.path.join(copy, "harness"),
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        harness = os.path.join(copy, "harness")
        values = os.path.join(harness, "kwb_harness", "values.py")
        marked = os.path.join(copy, "marked.py")
        with open(marked, "w") as f:
            f.write("MARK = 'planted'\n")
        import importlib.util
        py_compile.compile(marked, cfile=importlib.util.cache_from_source(values),
                           invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
        probe = "import kwb_harness.values as v\nprint(getattr(v, 'MARK', 'source'))\n"
        with open(os.path.join(self.folder, "probe_main.py"), "w") as f:
            f.write(probe)

        def run(cache: str) -> str:
            env = self.stage_environment()
            if cache:
                env["KWB_BYTECODE_CACHE"] = cache
            done = subprocess.run([sys.executable, "-B", os.path.join(harness, "kwb_stage.py"), "probe_main"],
                                  cwd=self.folder, env=env, capture_output=True, text=True, timeout=120)
            self.assertEqual(done.returncode, 0, done.stderr)
            return done.stdout.strip()

        cache = tempfile.mkdtemp(prefix="kwb-engine-cache-")
        self.assertEqual(run(""), "source")  # bytecode beside the harness's sources is never read
        self.assertEqual(run(cache), "source")  # nor with a cache that does not hold it
        py_compile.compile(marked, cfile=cache_path(cache, values),
                           invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
        self.assertEqual(run(cache), "planted")  # the engine's cache is the harness's only bytecode

    def test_a_cache_that_is_not_an_absolute_folder_is_ignored(self):
        probe = "import sys\nprint(sys.pycache_prefix)\n"
        self.assertEqual(self.run_stage(probe, engine_cache="relative/cache").strip(), "None")
        self.assertEqual(self.run_stage(probe, engine_cache="/nonexistent/kwb-cache").strip(), "None")

    def test_the_fill_refuses_to_run_without_a_writable_cache(self):
        env = dict(os.environ)
        env.pop("KWB_BYTECODE_CACHE", None)
        done = subprocess.run([sys.executable, "-I", BOOTSTRAP, "kwb_harness.bytecode_fill"], env=env,
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertIn("no writable cache", done.stderr)

    def test_folders_the_candidate_writes_are_never_trusted(self):
        installation = ["/opt/python"]
        self.assertTrue(bytecode_policy.trusts_bytecode_in("/opt/python/lib", installation, ["/tmp"]))
        self.assertFalse(bytecode_policy.trusts_bytecode_in("/opt/pythonx/lib", installation, ["/tmp"]))
        self.assertFalse(bytecode_policy.trusts_bytecode_in("/opt/python/ws", installation, ["/opt/python/ws"]))
        self.assertFalse(bytecode_policy.trusts_bytecode_in("/srv/ws", installation, ["/tmp"]))


if __name__ == "__main__":
    unittest.main()
