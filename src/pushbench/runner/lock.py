"""One run per folder: an exclusive lock on ``OUT/.pushbench.lock`` while a run writes there.

A second run on the same folder (another terminal, a second ``dvc repro``) stops at once with
``RunLocked`` naming the holder, instead of interleaving its rows with the first one's. The lock
is an OS lock (``flock`` through ``filelock``), so a killed run leaves no lock behind: the kernel
drops it with the process and a rerun takes it over (and resumes). The file is removed before the
lock is released, so a finished run folder holds only its outputs; ``filelock`` notices a lock file
unlinked under it and retries on the new one, so removing it cannot let two runs in.
"""

from __future__ import annotations

import os
import socket
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from filelock import FileLock, Timeout

LOCK_NAME = ".pushbench.lock"


class RunLocked(RuntimeError):
    """Another run holds the folder."""


def _holder_line() -> str:
    return f"pid {os.getpid()} on {socket.gethostname()}"


def _write_holder(fd: int) -> None:
    os.ftruncate(fd, 0)
    os.write(fd, (_holder_line() + "\n").encode("utf-8"))


def _holder(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""
    return text.splitlines()[0][:200] if text else ""


@contextmanager
def run_lock(out: Path) -> Iterator[Path]:
    """Hold the run folder ``out`` (created if missing) for the duration of the block."""
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(f"the run folder {out} is a file; --out names a folder")
    out.mkdir(parents=True, exist_ok=True)
    path = out / LOCK_NAME
    lock = FileLock(path, blocking=False, on_acquired=_write_holder)
    try:
        lock.acquire()
    except Timeout:
        holder = _holder(path)
        raise RunLocked(f"another run ({holder or 'holder unknown'}) is writing to {out}; wait for it to end "
                        "or choose another --out (one run per folder)") from None
    try:
        yield path
    finally:
        try:
            path.unlink(missing_ok=True)  # while still held: a run finding it unlinked retries
        finally:
            lock.release()
