"""Workspaces reused across episodes in one process: a copy reset to the snapshot keeps its fork server.

A new ``Workspace`` copies the snapshot and its first test run starts the jailed fork server
(``sandbox.forkserver``), about 0.3 s together; an episode that runs one or two distinct tests pays
that in full. ``open_workspace`` hands out this process's idle copy of the snapshot instead, and
``release`` takes it back at the episode's end: ``Workspace.reset`` undoes every tool write, empties
the home folder and compares the copy with the snapshot as it was copied (every file's bytes, every
entry's mode, size and mtime), and only a copy equal to a new one (and whose server, if any, is
still clean) is kept. So the next episode sees exactly what a new
copy would show: the same files, bytes and edit mtimes, a fork server that imported only trusted
code and whose children were all killed after each run (the same guarantee as between two runs of
one episode).

Idle copies belong to the process that made them: a forked child forgets its parent's (it neither
uses nor removes them), and a process removes its own at exit (``atexit``, and for a
multiprocessing worker that ends normally, multiprocessing's own exit hooks). A family's
``release_idle`` hook (``close_idle``) removes them at once, for executors whose workers may be
killed rather than ended (Ray). ``PUSHBENCH_SWE_POOL=off`` gives every episode a new copy.
"""

from __future__ import annotations

import multiprocessing.util
import os
import threading
from pathlib import Path

from pushbench.tasks.swe.runs import Workspace

POOL_ENV = "PUSHBENCH_SWE_POOL"  # "off": every episode copies the snapshot afresh
MAX_PER_SNAPSHOT = 2  # idle copies of one snapshot (the manifest builds check two groups at a time)
MAX_IDLE = 6  # idle copies in all (three snapshots); the oldest is removed first

_lock = threading.Lock()
_idle: list[tuple[tuple[str, str], Workspace]] = []  # oldest first
_exit_hook_pid: int | None = None


def pool_enabled() -> bool:
    return os.environ.get(POOL_ENV, "").lower() not in ("off", "0", "no", "false")


def open_workspace(repo: str, snapshot_root: Path | None = None) -> Workspace:
    """This process's idle copy of the snapshot, or a new one."""
    if pool_enabled():
        key = _key(repo, snapshot_root)
        with _lock:
            for i in range(len(_idle) - 1, -1, -1):
                if _idle[i][0] == key:
                    ws = _idle.pop(i)[1]
                    if not ws.closed:
                        return ws
    return Workspace(repo, snapshot_root)


def release(ws: Workspace) -> None:
    """Done with ``ws``: kept idle if it resets to the snapshot exactly, else removed. Releasing an
    idle copy again changes nothing (an environment may end twice): listed twice, one copy would be
    handed to two users at once."""
    if ws.closed or is_idle(ws):
        return
    if not pool_enabled() or not _clean_server(ws) or not _reset(ws):
        ws.close()
        return
    key = _key(ws.repo, ws.pristine.parent)
    with _lock:
        if sum(k == key for k, _ in _idle) >= MAX_PER_SNAPSHOT:
            evicted = [ws]
        else:
            _idle.append((key, ws))
            evicted = [_idle.pop(0)[1] for _ in range(len(_idle) - MAX_IDLE)]
        _register_exit_hook()
    for old in evicted:
        old.close()


def is_idle(ws: Workspace) -> bool:
    with _lock:
        return any(idle is ws for _, idle in _idle)


def close_idle() -> None:
    """Remove every idle copy of this process (and stop their fork servers)."""
    with _lock:
        spaces = [ws for _, ws in _idle]
        _idle.clear()
    for ws in spaces:
        ws.close()


def _key(repo: str, snapshot_root: Path | None) -> tuple[str, str]:
    from pushbench import config

    return repo, str(Path(snapshot_root or config.SNAPSHOT_SRC).resolve())


def _clean_server(ws: Workspace) -> bool:
    """No server, or one still running (a server that retired itself is not carried over)."""
    return all(server.alive for server in ws._servers)


def _reset(ws: Workspace) -> bool:
    try:
        return ws.reset()
    except OSError:
        return False


def _register_exit_hook() -> None:
    """A multiprocessing worker ends with os._exit (no atexit): its own exit hooks remove the copies."""
    global _exit_hook_pid
    if _exit_hook_pid != os.getpid() and multiprocessing.parent_process() is not None:
        multiprocessing.util.Finalize(None, close_idle, exitpriority=10)
        _exit_hook_pid = os.getpid()


def _forget_after_fork() -> None:
    """In a forked child: the parent's idle copies are not ours to use or to remove."""
    global _lock, _exit_hook_pid
    for _, ws in _idle:
        ws._finalizer.detach()
    _idle.clear()
    _lock = threading.Lock()
    _exit_hook_pid = None


os.register_at_fork(after_in_child=_forget_after_fork)
