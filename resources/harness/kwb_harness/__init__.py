"""Kernel Workbench evaluation harness.

Runs one evaluation stage (inspect, compile, verify, profile, baseline) for a CUDA-Agent
style workspace and reports it as JSON. The package only uses relative imports so that it
can also be copied into a workspace as ``utils/kwb_harness`` and imported from there.

``stages`` holds the stages and what runs them, ``integrity`` the reward-integrity defences,
``timing`` the clocks, timers and input pools; the modules they share (request, result,
errors, models, values, ...) sit at the top level. There is no import cycle among the modules
(tools/check_python_imports.py).
"""

PROTOCOL_VERSION = 1

STAGES = ("inspect", "compile", "verify", "profile", "baseline", "screen", "similar")
