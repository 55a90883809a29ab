"""Limited subprocess runs and confined paths for agent-controlled workspaces (the weak layer).

The bubblewrap jail (``sandbox.jail``) adds namespaces and a filesystem view on top of this.

Two rules keep an agent (and the code it edits) inside its episode's workspace:

* **Paths** (``resolve_inside``): an agent-given path is relative, has no ``..`` part, no control
  characters, and no component of it may be a symlink, so nothing planted in the copy can point
  out of it; the resolved path must lie under the workspace root.
* **Processes** (``run_sandboxed``): a child process starts in a new session with CPU-time,
  address-space, open-file and file-size limits (``resource.setrlimit`` in ``preexec_fn``), a
  wall-clock timeout that kills its whole process group, a working directory inside the workspace,
  and an environment built from scratch (``clean_env``): PATH, PYTHONPATH, HOME/TMPDIR inside the
  workspace, LANG and the few switches the project sets on purpose. Nothing else of the parent's
  environment (API keys, tokens, proxies) is passed on.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

MAX_OUTPUT_BYTES = 200_000  # a child's combined output beyond this is cut (the tail is kept)
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
MAX_NAME_BYTES = 255  # the longest file name the file systems allow


class PathRefused(ValueError):
    """An agent-given path that would leave (or cannot be proven inside) the workspace."""


@dataclass(frozen=True)
class Limits:
    cpu_seconds: int = 60  # RLIMIT_CPU: CPU time of the child
    memory_bytes: int = 2 * 1024**3  # RLIMIT_AS: address space (a pytest run needs ~300 MB)
    open_files: int = 256  # RLIMIT_NOFILE
    file_bytes: int = 64 * 1024**2  # RLIMIT_FSIZE: the largest file the child may write
    wall_seconds: float = 60.0  # killed (whole process group) after this


@dataclass(frozen=True)
class SandboxResult:
    returncode: int | None  # None when killed on timeout
    output: str  # stdout and stderr interleaved, decoded (errors replaced), tail-truncated
    timed_out: bool
    truncated: bool


def resolve_inside(root: Path, relative: str) -> Path:
    """``root / relative`` if it provably stays inside ``root``; else ``PathRefused``."""
    if not isinstance(relative, str) or not relative.strip():
        raise PathRefused("the path is empty")
    if any(ord(c) < 32 or ord(c) == 127 for c in relative):
        raise PathRefused("the path contains control characters")
    text = relative.replace("\\", "/")
    if text.startswith("/") or (len(text) > 1 and text[1] == ":"):
        raise PathRefused(f"{relative!r} is an absolute path; use a path relative to the workspace")
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise PathRefused(f"{relative!r} contains '..'")
    if not parts:
        raise PathRefused(f"{relative!r} names the workspace itself")
    if any(len(p.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES for p in parts):
        raise PathRefused(f"a part of {relative[:80]!r} is longer than a file name may be ({MAX_NAME_BYTES} bytes)")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise PathRefused("the path holds text that cannot be encoded as UTF-8") from None
    base = root.resolve()
    current = base
    for part in parts:
        current = current / part
        if current.is_symlink():
            raise PathRefused(f"{relative!r} goes through a symbolic link, which is not followed")
    if not current.resolve().is_relative_to(base):  # belt and braces after the symlink walk
        raise PathRefused(f"{relative!r} resolves outside the workspace")
    return current


def clean_env(home: Path, pythonpath: Sequence[Path] = (), extra: Mapping[str, str] | None = None,
              bytecode_cache: Path | None = None) -> dict[str, str]:
    """A child environment built from nothing: only what the project passes on purpose.

    Bytecode is never written into the workspace: without ``bytecode_cache`` none is written at
    all; with it, every ``.pyc`` goes under that folder (``PYTHONPYCACHEPREFIX``), outside the copy.
    """
    env = {
        "PATH": SYSTEM_PATH,
        "HOME": str(home),
        "TMPDIR": str(home),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",  # no __pycache__ written into the workspace
        "PYTHONHASHSEED": "0",  # set-ordering in test output is the same every run
        "PYTHONUNBUFFERED": "1",
    }
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(str(p) for p in pythonpath)
    if bytecode_cache is not None:
        del env["PYTHONDONTWRITEBYTECODE"]
        env["PYTHONPYCACHEPREFIX"] = str(bytecode_cache)
    env.update(extra or {})
    return env


def _limiter(limits: Limits):
    def apply() -> None:  # runs in the child between fork and exec
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds))
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
        resource.setrlimit(resource.RLIMIT_NOFILE, (limits.open_files, limits.open_files))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return apply


def run_sandboxed(argv: Sequence[str], workspace: Path, cwd: Path, env: Mapping[str, str],
                  limits: Limits = Limits()) -> SandboxResult:
    """Run ``argv`` confined as described in the module docstring; never raises for the child's faults."""
    root = workspace.resolve()
    where = cwd.resolve()
    if not where.is_relative_to(root):
        raise PathRefused(f"working directory {cwd} is outside the workspace")
    return run_limited(argv, where, env, limits)


def run_limited(argv: Sequence[str], cwd: Path, env: Mapping[str, str], limits: Limits) -> SandboxResult:
    """Start ``argv`` in a new session under ``limits``; collect its output; kill its group at the end."""
    proc = subprocess.Popen(list(argv), cwd=cwd, env=dict(env), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, close_fds=True,
                            start_new_session=True, preexec_fn=_limiter(limits))
    timed_out = False
    try:
        raw, _ = proc.communicate(timeout=limits.wall_seconds)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc.pid)
        raw, _ = proc.communicate()
    _kill_group(proc.pid)  # nothing the child started outlives the run
    truncated = len(raw) > MAX_OUTPUT_BYTES
    if truncated:
        raw = raw[-MAX_OUTPUT_BYTES:]
    return SandboxResult(None if timed_out else proc.returncode, raw.decode("utf-8", "replace"),
                         timed_out, truncated)


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
