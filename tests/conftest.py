"""Shared fixtures: a small hand-written repository, the real snapshots, one fresh manifest build.

The hand-written repository (``fixture_repo``) is small enough that every expected set below is
stated by hand; tests of the predicates, the unit ids and the reader compare against these sets.
The real-snapshot fixtures use the extracted trees under ``snapshots/src`` and a manifest build
made once per test session (shared by the xdist workers through a file lock).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Callable

import pytest
from filelock import FileLock

sys.path.insert(0, str(Path(__file__).parent / "helpers"))  # shared test helpers (tests/helpers/)
os.environ["PUSHBENCH_RAISE_TOOL_ERRORS"] = "1"  # a tool handler's bug fails the test (tools/base.py)

from pushbench import config  # noqa: E402
from pushbench.tasks.reposcan.codeindex import CodeUnit, load_units
from pushbench.tasks.reposcan.search import CodeSearch
from pushbench.tasks.base import TaskSpec
from pushbench.verifier import Verifier

from handmade import FIXTURE_FILES, FIXTURE_VALID, REPOS, make_spec, write_tree

# The longest modules (minutes each) are collected first, so that xdist (`make test` hands out whole
# modules in collection order) starts them at once rather than ending the run with one of them alone.
SLOWEST_FIRST = ("tests/test_pipeline_smoke.py", "tests/test_adding_a_family.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: not item.nodeid.startswith(SLOWEST_FIRST))  # stable: the rest keep their order


# --------------------------------------------------------------------------- the fixture repo

@pytest.fixture
def fixture_repo(tmp_path: Path) -> Path:
    """The hand-written repository, as ``<tmp>/snaps/fixt`` (a snapshot root holding one repo)."""
    return write_tree(tmp_path / "snaps" / "fixt", FIXTURE_FILES)


@pytest.fixture
def fixture_units(fixture_repo: Path) -> tuple[CodeUnit, ...]:
    return load_units(fixture_repo)


@pytest.fixture
def fixture_search(fixture_units: tuple[CodeUnit, ...]) -> CodeSearch:
    return CodeSearch(fixture_units, max_results=50, page_size=10)


@pytest.fixture
def make_fixture_env(fixture_search: CodeSearch) -> Callable[..., Any]:
    """RepoScanEnv on the fixture repo whose verifier accepts the `fixture`-predicate valid set."""
    from pushbench.tasks.reposcan.env import RepoScanEnv

    def make(predicate: str = "fixture", **kwargs: Any):
        spec = make_spec(predicate=predicate, **kwargs)
        valid = frozenset(FIXTURE_VALID[predicate])
        verifier = Verifier(spec.task_id, spec.target, valid.__contains__)
        return RepoScanEnv(spec, fixture_search, verifier)

    return make


# --------------------------------------------------------------------------- the real snapshots


@pytest.fixture(scope="session")
def snapshot_root() -> Path:
    """The extracted pinned snapshots (a DVC output; skipped with a hint when absent)."""
    missing = [name for name in REPOS if not (config.SNAPSHOT_SRC / name).is_dir()]
    if missing:
        pytest.skip(f"snapshots {missing} not extracted at {config.SNAPSHOT_SRC}; "
                    "run `.venv/bin/pushbench snapshots fetch` (or `make repro`)")
    return config.SNAPSHOT_SRC


def _shared_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A temp folder shared by all xdist workers of this run (the worker's own one otherwise)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def built_data(tmp_path_factory: pytest.TempPathFactory, snapshot_root: Path) -> Path:
    """A data root holding a fresh reposcan build (``manifests/``, ``hidden/``), made once per run."""
    from pushbench.tasks.manifests import build_family

    shared = _shared_dir(tmp_path_factory)
    target = shared / "reposcan-build-a"
    with FileLock(str(shared / "reposcan-build.lock")):
        if not (target / "BUILT").is_file():
            build_family("reposcan", data_root=target)
            (target / "BUILT").write_text("ok\n", encoding="utf-8")
    return target


@pytest.fixture(scope="session")
def real_tasks(built_data: Path) -> dict[str, TaskSpec]:
    from pushbench.tasks import load_tasks

    return {t.task_id: t for t in load_tasks("reposcan", built_data / "manifests")}


@pytest.fixture(scope="session")
def hidden_valid(built_data: Path) -> Callable[[str], set[str]]:
    def valid(task_id: str) -> set[str]:
        path = built_data / "hidden" / "reposcan" / f"{task_id}.json"
        return set(json.loads(path.read_text(encoding="utf-8"))["valid"])

    return valid


@pytest.fixture
def real_env(real_tasks: dict[str, TaskSpec], built_data: Path, snapshot_root: Path) -> Callable[..., Any]:
    """A fresh RepoScanEnv for a real task id (built by the family, as the runner does)."""
    from pushbench.tasks import get_family

    def make(task_id: str = "reposcan-requests-fixture-n010", sink: Any = None):
        return get_family("reposcan").environment(real_tasks[task_id], snapshot_root=snapshot_root,
                                                  hidden_root=built_data / "hidden", sink=sink)

    return make
