"""A tiny data root for the MCP/harness tests: the hand-written repo as snapshot ``fixt``, a
RepoScan manifest of fixture-predicate tasks on it, and their hidden answers. Needs no snapshots."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from pushbench.tasks.base import TaskSpec, write_manifest
from pushbench.tasks.reposcan.reader import Goal, objective_text
from pushbench.verifier import write_hidden

from handmade import FIXTURE_ARGS, FIXTURE_FILES, FIXTURE_VALID, write_tree

# (target, budget): small targets on the 9 valid `db`-fixture tests of the hand-written repo
TASKS = {3: 20, 5: 12}


def task_id(target: int) -> str:
    return f"reposcan-fixt-fixture-n{target:03d}"


def make_data(root: Path) -> tuple[Path, Path, dict[str, TaskSpec]]:
    """Write snapshots/ and data/ under ``root``; returns (data root, snapshot root, tasks by id)."""
    snaps, data = root / "snaps", root / "data"
    write_tree(snaps / "fixt", FIXTURE_FILES)
    tasks = {}
    for target, budget in TASKS.items():
        goal = Goal("fixt", "fixture", FIXTURE_ARGS["fixture"], target)
        spec = TaskSpec(task_id=task_id(target), family="reposcan", repo="fixt", predicate="fixture",
                        objective=objective_text(goal), target=target, budget=budget,
                        tools=["search", "submit", "status", "final"], oracle_steps=3,
                        settings={"page_size": 10, "max_results": 50, "max_submit": 20,
                                  "predicate_arg": FIXTURE_ARGS["fixture"]})
        write_hidden("reposcan", spec.task_id, {"valid": sorted(FIXTURE_VALID["fixture"])}, data / "hidden")
        tasks[spec.task_id] = spec
    write_manifest(data / "manifests" / "reposcan.jsonl", list(tasks.values()))
    return data, snaps, tasks


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve_argv(task: str, log: Path, data: Path, snaps: Path) -> list[str]:
    return [sys.executable, "-m", "pushbench.cli", "serve-mcp", "--task", task, "--log", str(log),
            "--data-root", str(data), "--snapshot-root", str(snaps)]


def start_http_server(argv: list[str], port: int, timeout: float = 30.0) -> subprocess.Popen:
    proc = subprocess.Popen(argv + ["--http", str(port)], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited: {proc.stderr.read().decode()[-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc
        except OSError:
            time.sleep(0.05)
    os.killpg(proc.pid, 9)
    raise RuntimeError("server did not listen in time")
