"""The hand-written fixture repository: its files and the exact expected units and valid sets."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from pushbench.tasks.base import TaskSpec

REPOS = ("flask", "pytest", "requests")  # the pinned real snapshots

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


def make_spec(repo: str = "fixt", predicate: str = "fixture", target: int = 3, budget: int = 30,
              max_submit: int = 20, **settings: Any) -> TaskSpec:
    """A hand-made task spec for environments built directly on the fixture repo."""
    return TaskSpec(task_id=f"reposcan-{repo}-{predicate}-n{target:03d}", family="reposcan", repo=repo,
                    predicate=predicate, objective="(test objective)", target=target, budget=budget,
                    tools=["search", "submit", "status", "final"], oracle_steps=1,
                    settings={"page_size": 10, "max_results": 50, "max_submit": max_submit,
                              "predicate_arg": FIXTURE_ARGS[predicate], **settings})
