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
# Compiled bytecode is looked up below /proc, where no file can be created, and never in a
# workspace's __pycache__: a planted .pyc whose recorded size and time match a clean .py would
# otherwise run in its place, unseen by the source checks. (-B already keeps stages from writing
# bytecode.)
sys.pycache_prefix = "/proc/kwb-no-bytecode"
if len(sys.argv) < 2:
    sys.exit("usage: kwb_stage.py MODULE [ARGS...]")
module = sys.argv[1]
del sys.argv[1]
runpy.run_module(module, run_name="__main__", alter_sys=True)
