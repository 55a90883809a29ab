"""Stopping the process group of an agent or server we started (shared by the launcher and the
agent-product recipes)."""

from __future__ import annotations

import os
import signal
import subprocess
import time

GRACE_SECONDS = 2.0


def stop_group(proc: subprocess.Popen, grace: float = GRACE_SECONDS) -> None:
    """SIGTERM the process group we started ``proc`` in, then SIGKILL whatever is left after the
    grace period. The leader is reaped as we poll, so a dead leader does not look alive."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, grace)):
        if not _group_alive(proc):
            return
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while _group_alive(proc) and time.monotonic() < deadline:
            time.sleep(0.02)


def _group_alive(proc: subprocess.Popen) -> bool:
    proc.poll()
    try:
        os.killpg(proc.pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True
