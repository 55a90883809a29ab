"""No workspace folder outlives its process (issue 32 item 6): a killed owner's folder is removed
at the next start; a living owner's is kept."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import tempfile
from pathlib import Path

import pytest

from pushbench.sandbox import jail_problem
from pushbench.sandbox.leftovers import remove_stale, workspace_prefix

from swe_toy import write_toy


def _make_and_hang(snaps: str, queue) -> None:  # a child that makes a workspace, then is killed
    from pushbench.tasks.swe.runs import Workspace

    ws = Workspace("toy", Path(snaps))
    queue.put(str(ws.base))
    signal.pause()


def test_a_dead_owners_folder_goes_and_a_living_ones_stays(tmp_path: Path) -> None:
    dead = mp.get_context("fork").Process(target=lambda: None)
    dead.start()
    dead.join()
    gone = Path(tempfile.mkdtemp(prefix=f"pushbench-swe-toy-{dead.pid}-", dir=tmp_path))
    kept = Path(tempfile.mkdtemp(prefix=workspace_prefix("toy"), dir=tmp_path))
    other = tmp_path / "pushbench-other"
    other.mkdir()
    assert remove_stale(tmp_path) == [gone.name]
    assert not gone.exists() and kept.is_dir() and other.is_dir()


@pytest.mark.skipif(jail_problem() is not None, reason=f"no bubblewrap jail here: {jail_problem()}")
def test_a_killed_workers_workspace_is_removed_at_the_next_start(tmp_path: Path) -> None:
    snaps = write_toy(tmp_path / "snaps")
    queue = mp.get_context("fork").Queue()
    child = mp.get_context("fork").Process(target=_make_and_hang, args=(str(snaps), queue))
    child.start()
    base = Path(queue.get(timeout=120))
    os.kill(child.pid, signal.SIGKILL)
    child.join()
    assert base.is_dir()  # killed: nothing of it ran
    assert base.name in remove_stale(base.parent)
    assert not base.exists()
