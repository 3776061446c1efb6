"""Command-line helpers for this workspace: compile, verification and profiling.

Each helper runs the Kernel Workbench harness (copied into utils/kwb_harness) in-process
on this workspace, with the same checks the workbench itself applies.
"""
