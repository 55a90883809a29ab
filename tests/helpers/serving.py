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


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class ServeSim:
    """``pushbench serve-sim`` as a subprocess on a free loopback port (``url`` ends in ``/v1``);
    stopped by its process id."""

    def __init__(self, log, *args: str):
        import sys

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        with open(log, "wb") as sink:
            self.proc = subprocess.Popen([sys.executable, "-m", "pushbench.cli", "serve-sim", "--host", "127.0.0.1",
                                          "--port", str(self.port), *args], stdout=sink, stderr=subprocess.STDOUT)
        self.log = log

    def ready(self, seconds: float = 90) -> bool:
        return answers_models(self.url, self.proc, seconds)

    def stats(self) -> dict[str, int]:
        return httpx.get(self.url.removesuffix("/v1") + "/sim/stats", timeout=10).json()

    def stop(self) -> None:
        import os
        import signal

        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


def serve_sim(log, *args: str, attempts: int = 2) -> ServeSim:
    """A ready serve-sim (a port taken meanwhile: one more try on another)."""
    for _ in range(attempts):
        server = ServeSim(log, *args)
        if server.ready():
            return server
        server.stop()
    raise RuntimeError(f"serve-sim did not start: {open(log).read()[-2000:]}")
