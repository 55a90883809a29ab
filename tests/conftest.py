"""Shared fixtures: a small hand-written repository, the real snapshots, one fresh manifest build.

The hand-written repository (``fixture_repo``) is small enough that every expected set below is
stated by hand; tests of the predicates, the unit ids and the reader compare against these sets.
The real-snapshot fixtures use the extracted trees under ``snapshots/src`` and a manifest build
made once per test session (shared by the xdist workers through a file lock).
"""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path
from typing import Any, Callable

import pytest
from filelock import FileLock

from pushbench import config
from pushbench.codeindex import CodeUnit, load_units
from pushbench.search import CodeSearch
from pushbench.tasks.base import TaskSpec
from pushbench.verifier import Verifier

REPOS = ("flask", "pytest", "requests")

# --------------------------------------------------------------------------- the fixture repo

FIXTURE_FILES: dict[str, str] = {
    "pkg/__init__.py": '''\
        """The package."""
        ''',
    "pkg/api.py": '''\
        """A tiny API module."""


        def get(url):
            """Fetch a URL and return the body."""
            return url


        def post(url, data=None):
            return (url, data)


        class Client:
            """A client bound to a base URL."""

            def __init__(self, base):
                self.base = base

            def fetch(self, path):
                """Fetch a path relative to the base."""
                return get(self.base + path)

            def _helper(self):
                return 1


        async def aget(url):
            """Fetch asynchronously."""
            return url


        def outer(x):
            """Outer function with a nested helper."""

            def inner(y):
                """Inner helper: add one."""
                return y + 1

            return inner(x)


        def multi(
            first,
            second=None,
            *rest,
            key: int = 0,
        ) -> tuple:
            """Multi-line signature."""
            return first, second, rest, key
        ''',
    "tests/conftest.py": '''\
        import pytest


        @pytest.fixture
        def db():
            """A fresh database for one test."""
            return {}
        ''',
    "tests/test_api.py": '''\
        import pytest

        from pkg import api


        def test_get(db):
            assert api.get("x") == "x"


        def test_post(db, tmp):
            api.post("x", data=db)


        def test_no_fixture():
            assert api.get("y")


        def test_no_call(db):
            """A documented test: still a test, so never 'documented'."""
            assert db == {}


        async def test_async(db):
            await api.aget("z")


        def test_multiline(
            tmp,
            db,
        ):
            result = api.Client("b").fetch("p")
            assert result


        def test_kwonly(*, db):
            assert db is not None


        @pytest.mark.parametrize("n", [1, 2])
        def test_param(n, db):
            assert api.get(n) == n


        def test_reference_only(db):
            fetch = api.get
            assert fetch


        def helper_uses_api(db):
            return api.get("h")


        def test_nested_call():
            def helper():
                return api.get("n")

            assert helper()


        class TestClient:
            """Tests of the client."""

            def test_method(self, db):
                client = make_client()
                client.fetch("a")

            def test_method_calls(self, tmp):
                api.post("m")

            def test_database(self, database):
                assert database
        ''',
    "tests/broken.py": '''\
        def test_broken(db:
            api.get(
        ''',
    "docs/notes.txt": '''\
        def test_in_text(db):
            api.get("not python")
        ''',
}

# The exact units of the fixture repo, in index order (path, then position in the file).
FIXTURE_UIDS = [
    "pkg/api.py::get",
    "pkg/api.py::post",
    "pkg/api.py::Client",
    "pkg/api.py::Client.__init__",
    "pkg/api.py::Client.fetch",
    "pkg/api.py::Client._helper",
    "pkg/api.py::aget",
    "pkg/api.py::outer",
    "pkg/api.py::outer.inner",
    "pkg/api.py::multi",
    "tests/conftest.py::db",
    "tests/test_api.py::test_get",
    "tests/test_api.py::test_post",
    "tests/test_api.py::test_no_fixture",
    "tests/test_api.py::test_no_call",
    "tests/test_api.py::test_async",
    "tests/test_api.py::test_multiline",
    "tests/test_api.py::test_kwonly",
    "tests/test_api.py::test_param",
    "tests/test_api.py::test_reference_only",
    "tests/test_api.py::helper_uses_api",
    "tests/test_api.py::test_nested_call",
    "tests/test_api.py::test_nested_call.helper",
    "tests/test_api.py::TestClient",
    "tests/test_api.py::TestClient.test_method",
    "tests/test_api.py::TestClient.test_method_calls",
    "tests/test_api.py::TestClient.test_database",
]

# Valid sets of the three predicate families on the fixture repo (fixture `db`, calls `api.`).
FIXTURE_VALID = {
    "fixture": {
        "tests/test_api.py::test_get",
        "tests/test_api.py::test_post",
        "tests/test_api.py::test_no_call",
        "tests/test_api.py::test_async",
        "tests/test_api.py::test_multiline",
        "tests/test_api.py::test_kwonly",
        "tests/test_api.py::test_param",
        "tests/test_api.py::test_reference_only",
        "tests/test_api.py::TestClient.test_method",
    },
    "documented": {
        "pkg/api.py::get",
        "pkg/api.py::Client.fetch",
        "pkg/api.py::aget",
        "pkg/api.py::outer",
        "pkg/api.py::outer.inner",
        "pkg/api.py::multi",
        "tests/conftest.py::db",
    },
    "calls": {
        "tests/test_api.py::test_get",
        "tests/test_api.py::test_post",
        "tests/test_api.py::test_no_fixture",
        "tests/test_api.py::test_async",
        "tests/test_api.py::test_multiline",
        "tests/test_api.py::test_param",
        "tests/test_api.py::test_nested_call",
        "tests/test_api.py::TestClient.test_method_calls",
    },
}
FIXTURE_ARGS = {"fixture": "db", "documented": "", "calls": "api."}


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


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


def make_spec(repo: str = "fixt", predicate: str = "fixture", target: int = 3, budget: int = 30,
              max_submit: int = 20, **settings: Any) -> TaskSpec:
    """A hand-made task spec for environments built directly on the fixture repo."""
    return TaskSpec(task_id=f"reposcan-{repo}-{predicate}-n{target:03d}", family="reposcan", repo=repo,
                    predicate=predicate, objective="(test objective)", target=target, budget=budget,
                    tools=["search", "submit", "status", "final"], oracle_steps=1,
                    settings={"page_size": 10, "max_results": 50, "max_submit": max_submit,
                              "predicate_arg": FIXTURE_ARGS[predicate], **settings})


@pytest.fixture
def make_fixture_env(fixture_search: CodeSearch) -> Callable[..., Any]:
    """RepoScanEnv on the fixture repo whose verifier accepts the `fixture`-predicate valid set."""
    from pushbench.tools.reposcan import RepoScanEnv

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
    from pushbench.manifests import build_family

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
