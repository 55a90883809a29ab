"""Workspace folders in the system temp folder that outlived their process (issue 32 item 6).

A workspace folder is named ``pushbench-swe-<repo>-<pid>-<random>``: it is removed when its copy
is closed, collected or its process exits normally; a process that was killed (a stopped run, an
ended test worker) leaves it behind. ``remove_stale`` removes every such folder whose process is
gone, once per process at its first workspace (and a folder of the old unnamed form once it is an
hour old).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from functools import cache
from pathlib import Path

PREFIX = "pushbench-swe-"
LEGACY_AGE_SECONDS = 3600


def workspace_prefix(repo: str) -> str:
    """``mkdtemp``'s prefix for a workspace of ``repo`` owned by this process."""
    return f"{PREFIX}{repo}-{os.getpid()}-"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    return True


def remove_stale(folder: Path | None = None) -> list[str]:
    """Remove the workspace folders of processes that no longer run; returns their names."""
    removed = []
    for entry in sorted(Path(folder or tempfile.gettempdir()).glob(PREFIX + "*")):
        parts = entry.name[len(PREFIX):].rsplit("-", 2)
        if len(parts) == 3 and parts[1].isdigit():
            stale = not _alive(int(parts[1]))
        else:  # the old form, without the owner's pid
            stale = time.time() - entry.lstat().st_mtime > LEGACY_AGE_SECONDS
        if stale and entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry.name)
    return removed


@cache
def remove_stale_once() -> None:
    remove_stale()
