"""Execution backends by name."""

from pushbench.backends.native import run_native

BACKENDS = {"native": run_native}

__all__ = ["BACKENDS", "run_native"]
