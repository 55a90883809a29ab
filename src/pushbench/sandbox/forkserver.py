"""A fork server in the bubblewrap jail: ``python -m <module>`` runs without re-importing the runner.

A jailed test run spends most of its start importing pytest, the standard library and the library's
dependencies before it imports the code under test. A ``ForkServer`` starts one long-lived jail per workspace (the same
binds, namespaces and environment as ``run_jailed``) whose Python process imports only trusted code
(``preload``: the modules a pristine run's start imports from outside the copy: the pinned pytest
runner, the standard library, the library's venv dependencies) and then forks one child per run; the child takes the run's limits,
environment, working directory and ``sys.path`` and runs the module as ``python -m`` would
(``forkserver_jail``). Between runs the server kills every other process of the jail and empties its
``/tmp``, ``/dev/shm`` and POSIX message queues (``/dev/mqueue``, mounted for this); the caller
empties the home folder and restores the copy, as for a plain run.

The server never sees the episode's copy on its own ``sys.path`` and its working directory is ``/``,
so no agent-written file runs before the fork. It is not dumpable and ignores catchable signals; a
child that kills or stops it anyway only loses the shortcut: ``run`` returns ``None`` (no reply, a
broken reply, or none within the wall limit plus a grace period) and the caller runs the command in
a fresh jail instead, so every outcome is one a plain jailed run gives.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import threading
import time
from dataclasses import asdict
from functools import lru_cache
from pathlib import Path
from typing import IO, Any, Mapping, Sequence, cast

from pushbench.sandbox.jail import Bind, _command, bwrap_path, interpreter
from pushbench.sandbox.process import Limits, SandboxResult, _kill_group, _limiter

SERVER_LIMITS = Limits(cpu_seconds=24 * 3600, wall_seconds=0.0, memory_bytes=1024**3)  # the server itself
START_SECONDS = 60.0  # the server's imports (cold bytecode on a loaded machine)
GRACE_SECONDS = 15.0  # beyond a run's wall limit before the host gives up on the server
FORK_SERVER_ENV = "PUSHBENCH_SWE_FORK_SERVER"  # "off": every run starts its own jail


def fork_server_enabled() -> bool:
    return os.environ.get(FORK_SERVER_ENV, "").lower() not in ("off", "0", "no", "false")


@lru_cache(maxsize=1)
def server_source() -> str:
    return (Path(__file__).with_name("forkserver_jail.py")).read_text(encoding="utf-8")


class ForkServer:
    """One jailed server; ``run`` is serialised (a workspace runs one test command at a time)."""

    def __init__(self, binds: Sequence[Bind], env: Mapping[str, str], preload: str):
        exe = bwrap_path()
        python, python_binds = interpreter()
        if exe is None:
            raise OSError("bubblewrap (bwrap) is not installed")
        command = _command(exe, [python, "-c", server_source(), preload], [*python_binds, *binds], "/", env,
                           mqueue=True)
        self._lock = threading.Lock()
        self._proc = subprocess.Popen(command, cwd="/", env=dict(env), stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, close_fds=True,
                                      start_new_session=True, preexec_fn=_limiter(SERVER_LIMITS))
        self._stdin, self._stdout = cast(IO[bytes], self._proc.stdin), cast(IO[bytes], self._proc.stdout)  # both PIPE
        self._buffer = b""
        if self._read_line(START_SECONDS) != b"ready":
            self.close()

    @property
    def alive(self) -> bool:
        return self._proc.poll() is None

    def run(self, module: str, args: Sequence[str], cwd: str, env: Mapping[str, str],
            pythonpath: Sequence[str], limits: Limits) -> SandboxResult | None:
        """``python -m module *args`` in a forked child; ``None`` when the server could not answer."""
        request = {"module": module, "args": list(args), "cwd": cwd, "env": dict(env),
                   "pythonpath": list(pythonpath), "limits": asdict(limits)}
        with self._lock:
            if not self.alive:
                return None
            try:
                self._stdin.write(json.dumps(request).encode() + b"\n")
                self._stdin.flush()
            except OSError:
                self.close()
                return None
            line = self._read_line(limits.wall_seconds + GRACE_SECONDS)
            reply: Any
            try:
                reply = json.loads(line) if line else None  # None: the indexing below raises TypeError
                result = SandboxResult(reply["returncode"], reply["output"], reply["timed_out"], reply["truncated"])
            except (ValueError, KeyError, TypeError):
                self.close()
                return None
            if not reply.get("clean", False):
                self.close()  # something of this run stays in the jail: the next run gets a new one
            return result

    def _read_line(self, timeout: float) -> bytes | None:
        """One line from the server, or ``None`` on EOF or timeout (the server is then stopped)."""
        deadline = time.monotonic() + timeout
        fd = self._stdout.fileno()
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            ready, _, _ = select.select([fd], [], [], max(0.0, remaining))
            data = os.read(fd, 1 << 20) if ready else b""
            if not data:
                self.close()
                return None
            self._buffer += data
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line

    def close(self) -> None:
        if self._proc.poll() is None:
            _kill_group(self._proc.pid)
        self._proc.wait()
        for stream in (self._stdin, self._stdout):
            try:
                stream.close()
            except OSError:
                pass


def start_server(binds: Sequence[Bind], env: Mapping[str, str], preload: str) -> ForkServer | None:
    """A running server, or ``None`` when it would not start (the caller runs plain jails)."""
    try:
        server = ForkServer(binds, env, preload)
    except OSError:
        return None
    return server if server.alive else None
