"""Starts a harness module in an isolated interpreter.

    python -I -B -u kwb_stage.py MODULE [ARGS...]

``-I`` keeps the working directory (a workspace the candidate writes), PYTHONPATH and the user's
site-packages off ``sys.path``, so a workspace file named like a standard-library module
(``statistics.py``) cannot be imported by the harness in its place. The harness folder is put
first on ``sys.path`` from this file's own location; then MODULE runs as ``python -m MODULE``
would run it, with the same ``sys.argv``.
"""

import os
import runpy
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# Bytecode only from the interpreter's installation, never from a folder the candidate can write
# (a planted .pyc whose recorded size and time match a clean .py would run in its place, unseen by
# the source checks): kwb_harness/isolation/bytecode_policy.py. Until its hook is in place, every
# lookup goes below /proc, where no file can be created. (-B keeps stages from writing bytecode.)
sys.pycache_prefix = "/proc/kwb-no-bytecode"
from kwb_harness.isolation import bytecode_policy  # noqa: E402

# The engine's cache for installations without bytecode of their own (read-only in a stage,
# written only by kwb_harness.bytecode_fill); None: bytecode beside the installation's sources,
# and the harness compiled from source.
_engine_cache = bytecode_policy.engine_cache()
bytecode_policy.install(cache_only=[os.path.dirname(os.path.abspath(__file__))] if _engine_cache else [])
sys.pycache_prefix = _engine_cache
if len(sys.argv) < 2:
    sys.exit("usage: kwb_stage.py MODULE [ARGS...]")
module = sys.argv[1]
del sys.argv[1]
runpy.run_module(module, run_name="__main__", alter_sys=True)
