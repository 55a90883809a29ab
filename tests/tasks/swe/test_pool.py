"""Workspaces reused across episodes (tasks.swe.pool): a reused copy shows exactly what a new one would."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
from pathlib import Path

import pytest

from pushbench.tasks.swe import pool
from pushbench.tasks.swe.runs import Workspace, run_tests
from pushbench.tasks.swe.units import inject
from pushbench.tools import ToolCall

from swe_toy import CLAMP_FAULT, clamp_env, released, write_toy

TEST = ["tests/test_mathx.py::test_clamp"]


@pytest.fixture
def snaps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PUSHBENCH_SWE_TEST_CACHE", "off")
    monkeypatch.delenv(pool.POOL_ENV, raising=False)
    yield write_toy(tmp_path / "snaps")
    pool.close_idle()


def episode(snaps: Path) -> Workspace:
    """A toy episode that edits the library, leaves a file in the home folder and runs the tests."""
    ws = pool.open_workspace("toy", snaps)
    inject(ws, [CLAMP_FAULT])
    ws.write("src/toy/mathx.py", ws.read("src/toy/mathx.py") + "\n# an agent's edit\n")
    (ws.home / "left-over").write_text("x")
    assert not run_tests(ws, TEST).passed
    return ws


def test_a_released_copy_is_reused_as_the_snapshot_with_its_server(snaps: Path) -> None:
    first = episode(snaps)
    server = first.fork_server()
    pool.release(first)
    assert released(first) and not first.closed
    again = pool.open_workspace("toy", snaps)
    assert again is first and again.fork_server() is server and server.alive  # no new copy, no new server
    assert again.read("src/toy/mathx.py") == (snaps / "toy" / "src/toy/mathx.py").read_text()
    assert not list(again.home.iterdir()) and not again.written
    fresh = Workspace("toy", snaps)
    try:
        for ws in (again, fresh):
            inject(ws, [CLAMP_FAULT])
        sizes_and_mtimes = [{rel: stamp[1:3] for rel, stamp in ws._scan().items()} for ws in (again, fresh)]
        assert again.digest() == fresh.digest() and sizes_and_mtimes[0] == sizes_and_mtimes[1]  # bytes, edit mtimes
        assert run_tests(again, TEST).output == run_tests(fresh, TEST).output
    finally:
        fresh.close()
        pool.release(again)


def test_a_copy_released_twice_goes_to_one_user_at_a_time(snaps: Path) -> None:
    """An environment that ends twice releases its copy twice: listed twice, the next two episodes
    (two threads of a manifest build) would inject faults into one folder at once."""
    first = episode(snaps)
    pool.release(first)
    pool.release(first)
    one, two = pool.open_workspace("toy", snaps), pool.open_workspace("toy", snaps)
    try:
        assert one is first and two is not first
    finally:
        pool.release(one)
        pool.release(two)


def test_a_copy_changed_behind_the_tools_back_is_restored_by_content(snaps: Path) -> None:
    ws = episode(snaps)
    target = ws.root / "tests/test_mathx.py"
    pristine = (snaps / "toy" / "tests/test_mathx.py").read_bytes()
    before = target.stat()
    target.write_bytes(target.read_bytes().replace(b"assert", b"pass  ", 1))  # same size
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))  # and the same mtime: the ctime still moved
    pool.release(ws)
    assert target.read_bytes() == pristine or (ws.closed and not ws.base.exists())
    if not ws.closed:
        assert released(ws)
    pool.close_idle()


@pytest.mark.parametrize("change", ["chmod", "folder"])
def test_a_mode_or_a_new_folder_left_by_a_test_run_is_not_carried_over(snaps: Path, change: str) -> None:
    ws = episode(snaps)
    if change == "chmod":
        os.chmod(ws.root / "src/toy/mathx.py", 0o000)  # bytes, size and mtime unchanged
    else:
        (ws.root / "src" / "json").mkdir()  # an empty folder: no file, so no digest sees it (restore removes it)
    pool.release(ws)
    if change == "chmod":
        assert ws.closed and not ws.base.exists()
    else:
        assert not (ws.root / "src" / "json").exists() and (ws.closed or released(ws))
    pool.close_idle()


def test_the_pool_is_bounded_and_can_be_turned_off(snaps: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spaces = [pool.open_workspace("toy", snaps) for _ in range(pool.MAX_PER_SNAPSHOT + 1)]
    for ws in spaces:
        pool.release(ws)
    assert [ws.closed for ws in spaces] == [False] * pool.MAX_PER_SNAPSHOT + [True]
    pool.close_idle()
    assert all(ws.closed and not ws.base.exists() for ws in spaces)
    monkeypatch.setenv(pool.POOL_ENV, "off")
    ws = pool.open_workspace("toy", snaps)
    pool.release(ws)
    assert ws.closed and not ws.base.exists()


def _child_episode(snaps: str) -> tuple[str, bool]:
    ws = pool.open_workspace("toy", Path(snaps))
    base, reused = str(ws.base), bool(ws.written)
    pool.release(ws)
    return base, reused


def test_a_forked_worker_gets_its_own_copies_and_removes_them_when_it_ends(snaps: Path) -> None:
    parents = episode(snaps)
    pool.release(parents)
    with mp.get_context("fork").Pool(1) as workers:
        bases = [workers.apply(_child_episode, (str(snaps),)) for _ in range(2)]
        workers.close()
        workers.join()
    assert bases[0] == bases[1] and bases[0][0] != str(parents.base)  # the child reused its own copy
    assert not Path(bases[0][0]).exists()  # removed by the worker's exit hooks
    assert parents.base.is_dir() and pool.open_workspace("toy", snaps) is parents  # the parent's is untouched


def test_an_episode_through_the_environment_releases_its_copy(snaps: Path) -> None:
    env = clamp_env(snaps)
    env.workspace.write("src/toy/mathx.py", env.workspace.read("src/toy/mathx.py").replace(">= low", "< low"))
    env.execute(ToolCall("final", json.dumps({"count": 0})))
    assert env.done and released(env.workspace)
