"""Timing: the trusted clock, per-call timers, input pools for timed calls and phase accounting."""
