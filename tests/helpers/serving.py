"""Waiting for an OpenAI-compatible server subprocess (serve-sim, llama-cpp-python) to answer."""

from __future__ import annotations

import subprocess
import time

import httpx


def answers_models(url: str, proc: subprocess.Popen, seconds: float, poll: float = 0.1) -> bool:
    """True once ``GET url/models`` gives 200 within ``seconds``; False if the process exits first
    or time runs out."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if httpx.get(url + "/models", timeout=min(5.0, max(1.0, seconds / 10))).status_code == 200:
                return True
        except httpx.HTTPError:
            time.sleep(poll)
    return False
