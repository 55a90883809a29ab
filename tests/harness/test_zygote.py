"""The fork servers of the black-box grid (harness/zygote.py) and the lean server entry point."""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pushbench import config
from pushbench.harness import zygote
from pushbench.harness.grid import run_plans
from pushbench.harness.launcher import EpisodePlan, resolve_agent

from blackbox_data import make_data, task_id

HEAVY = ("pandas", "openai", "anthropic", "typer", "rich", "pushbench.cli", "pushbench.viewer", "langgraph")


@pytest.fixture
def data(tmp_path: Path):
    return make_data(tmp_path)


@pytest.fixture
def rooted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Episodes under tmp_path lie outside the checkout; name it, as a zygote needs one."""
    monkeypatch.setenv("PUSHBENCH_ROOT", str(config.ROOT))


def _line(stream, timeout: float = 30.0) -> bytes:
    selector = selectors.DefaultSelector()
    selector.register(stream, selectors.EVENT_READ)
    assert selector.select(timeout), "no reply in time"
    return stream.readline()


def _gone(pid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not Path(f"/proc/{pid}").exists():
            return True
        time.sleep(0.05)
    return False


def _server_argv(folder: Path, data, log: Path, task: str) -> list[str]:
    data_root, snaps, _ = data
    return [sys.executable, "-m", "pushbench.harness.zygote", "run", str(folder), zygote.SERVER, "serve-mcp",
            "--task", task, "--log", str(log), "--data-root", str(data_root), "--snapshot-root", str(snaps)]


def test_a_forked_server_answers_on_the_launchers_pipes_and_dies_with_it(data, rooted, tmp_path: Path) -> None:
    _, snaps, _ = data
    with zygote.running(tmp_path, [zygote.Index(str(snaps), "fixt", 50, 10)]) as folder:
        log = tmp_path / "log"
        proc = subprocess.Popen(_server_argv(folder, data, log, task_id(3)), stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        proc.stdin.write(b"not json\n")
        proc.stdin.flush()
        assert json.loads(_line(proc.stdout))["error"]["code"] == -32700
        pid = int((log / "server.pid").read_text())
        parent = next(line for line in Path(f"/proc/{pid}/status").read_text().splitlines() if line.startswith("PPid:"))
        assert pid != proc.pid and int(parent.split()[1]) != proc.pid  # forked by the zygote, not started
        os.killpg(proc.pid, signal.SIGKILL)  # as at a time limit: the launcher's group dies
        proc.wait()
        assert _gone(pid)  # the zygote saw the launcher go and killed its fork
        assert zygote.alive(folder)
        # another module path (or project root) than the zygote's: the launcher starts the server itself
        env = dict(os.environ, PYTHONPATH=os.environ.get("PYTHONPATH", "") + os.pathsep + str(tmp_path))
        log = tmp_path / "log2"
        proc = subprocess.Popen(_server_argv(folder, data, log, task_id(3)), stdin=subprocess.PIPE, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        proc.stdin.write(b"not json\n")
        proc.stdin.flush()
        assert json.loads(_line(proc.stdout, 120))["error"]["code"] == -32700
        assert int((log / "server.pid").read_text()) == proc.pid  # exec'd, not forked
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
    assert not zygote.alive(folder)  # stopped with the run: the grid refuses rows after that


def test_the_launcher_becomes_the_module_where_no_zygote_serves(data, tmp_path: Path) -> None:
    argv = _server_argv(tmp_path / "none", data, tmp_path / "log", "no-such-task")
    done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
    assert done.returncode == 1  # as `pushbench serve-mcp`: a one-line error
    assert done.stderr.decode().strip().splitlines() == [done.stderr.decode().strip()]
    assert "no RepoScan task 'no-such-task'" in done.stderr.decode()


def test_forked_episodes_give_the_rows_of_started_ones(data, rooted, tmp_path: Path) -> None:
    data_root, snaps, tasks = data
    plans = [EpisodePlan(tasks[task_id(n)], resolve_agent("standin-sim-base"), "default", 120.0,
                         data_root=data_root, snapshot_root=snaps) for n in (3, 5)]
    rows = {}
    for fork in (False, True):
        path = run_plans(plans, tmp_path / f"fork{fork}", workers=2, fork_server=fork)
        rows[fork] = path.read_text()
    assert rows[True] == rows[False] and len(rows[True].splitlines()) == 2
    config_file = next((tmp_path / "forkTrue" / "episodes").iterdir()) / "mcp.json"
    assert json.loads(config_file.read_text())["mcpServers"]["pushbench"]["args"][:2] == ["-m", "pushbench.harness.zygote"]


def test_the_processes_entry_points_stay_lean() -> None:
    """The server, its entry point and the stand-in import no CLI, viewer, pandas or API SDK; the
    launcher imports no MCP or pydantic at all (each costs CPU in every episode's processes)."""
    probe = ("import sys, json; import {mods}; print(json.dumps(sorted(m for m in sys.modules "
             "if any(m == b or m.startswith(b + '.') for b in {bad}))))")
    for mods, bad in ((["pushbench.harness.mcp_main", "pushbench.harness.mcp_server", "pushbench.harness.standin"], HEAVY),
                      (["pushbench.harness.zygote"], HEAVY + ("mcp", "mcp_types", "pydantic"))):
        code = probe.format(mods=", ".join(mods), bad=repr(set(bad)))
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
        assert json.loads(done.stdout) == [], mods
