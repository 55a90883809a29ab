"""Shared pieces of the DataOps-lite tests: one fresh build per test run, and env makers."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock

from pushbench.tasks.base import TaskSpec
from pushbench.tools import ToolCall


def shared_dir(factory: pytest.TempPathFactory) -> Path:
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def dataops_data(tmp_path_factory: pytest.TempPathFactory, snapshot_root: Path) -> Path:
    """A data root holding a fresh dataops build (manifests/, hidden/), made once per run."""
    from pushbench.tasks.manifests import build_family

    shared = shared_dir(tmp_path_factory)
    target = shared / "dataops-build"
    with FileLock(str(shared / "dataops-build.lock")):
        if not (target / "BUILT").is_file():
            build_family("dataops", data_root=target, snapshot_root=snapshot_root)
            (target / "BUILT").write_text("ok\n", encoding="utf-8")
    return target


@pytest.fixture(scope="session")
def dataops_tasks(dataops_data: Path) -> dict[str, TaskSpec]:
    from pushbench.tasks import load_tasks

    return {t.task_id: t for t in load_tasks("dataops", dataops_data / "manifests")}


@pytest.fixture
def dataops_env(dataops_tasks: dict[str, TaskSpec], dataops_data: Path, snapshot_root: Path):
    from pushbench.tasks import get_family

    made = []

    def make(task_id: str = "dataops-n03-b1"):
        env = get_family("dataops").environment(dataops_tasks[task_id], snapshot_root=snapshot_root,
                                                hidden_root=dataops_data / "hidden")
        made.append(env)
        return env

    yield make
    for env in made:
        env.end("test-cleanup")


def call(env: Any, name: str, **args: Any):
    return env.execute(ToolCall(name, args))


def reference_action(env: Any, unit: str) -> tuple[str, ...]:
    """What the reader derives from every page of the unit's files (the reference answer/edit)."""
    from pushbench.tasks.dataops import units as du
    from pushbench.tasks.dataops.oracle import read_unit

    files = {rel: (env.unit_dir(unit) / rel).read_text(encoding="utf-8") for rel in env.files_of(unit)}
    question = du.parse_title(env.records[unit].info.title)
    action, _ = read_unit(unit, question, files, env.page_rows, env.page_lines)
    return action


def do_action(env: Any, unit: str, action: tuple[str, ...]):
    if action[0] == "answer":
        return call(env, "answer", unit=unit, value=action[1])
    return call(env, "edit", unit=unit, path=action[1], old=action[2], new=action[3])


