"""Poison: a workspace file named like the standard library's statistics module."""
import os
import sys

sys.stderr.write("stdlib_shadow: the workspace's statistics.py was imported in place of the standard library's\n")
os._exit(17)
