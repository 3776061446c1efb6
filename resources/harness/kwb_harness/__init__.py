"""Kernel Workbench evaluation harness.

Runs one evaluation stage (inspect, compile, verify, profile, baseline) for a CUDA-Agent
style workspace and reports it as JSON. The package only uses relative imports so that it
can also be copied into a workspace as ``utils/kwb_harness`` and imported from there.
"""

PROTOCOL_VERSION = 1

STAGES = ("inspect", "compile", "verify", "profile", "baseline")
