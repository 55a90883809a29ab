"""Tests for pushbench.tasks.reposcan.codeindex: tokens, code units and their ids, headers, docstrings, bodies."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pushbench.tasks.reposcan.codeindex import load_units, tokenize, units_of_file
from handmade import FIXTURE_UIDS


def units_of(tmp_path: Path, source: str, rel: str = "mod.py"):
    path = tmp_path / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return {u.qualname: u for u in units_of_file(path, rel)}


# --------------------------------------------------------------------------- tokenize


@pytest.mark.parametrize(("text", "tokens"), [
    ("test_httpbin_get", ["test", "httpbin", "get"]),
    ("HTTPBinClient", ["http", "bin", "client", "httpbinclient"]),
    ("getURL2x", ["get", "url", "geturl", "2", "x"]),
    ("requests.get(url)", ["requests", "get", "url"]),
    ("__init__", ["init"]),
    ("snake_case CamelCase", ["snake", "case", "camel", "case", "camelcase"]),
    ("", []),
    ("  ... () !", []),
])
def test_tokenize(text: str, tokens: list[str]) -> None:
    assert list(tokenize(text)) == tokens


# --------------------------------------------------------------------------- the fixture repo


def test_unit_ids_of_the_fixture_repo_are_exact(fixture_units) -> None:
    assert [u.uid for u in fixture_units] == FIXTURE_UIDS
    for unit in fixture_units:
        assert unit.uid == f"{unit.path}::{unit.qualname}"


def test_units_are_ordered_by_path_then_line(fixture_units) -> None:
    keys = [(u.path, u.lineno) for u in fixture_units]
    assert keys == sorted(keys)


def test_syntax_errors_and_non_python_files_give_no_units(fixture_units) -> None:
    paths = {u.path for u in fixture_units}
    assert paths == {"pkg/api.py", "tests/conftest.py", "tests/test_api.py"}
    assert not any("broken" in u.uid or "in_text" in u.uid for u in fixture_units)


def test_kinds_names_and_test_flags(fixture_units) -> None:
    by_uid = {u.uid: u for u in fixture_units}
    classes = {uid for uid, u in by_uid.items() if u.kind == "class"}
    assert classes == {"pkg/api.py::Client", "tests/test_api.py::TestClient"}
    assert {u.kind for u in fixture_units} == {"class", "function"}
    tests = {uid for uid, u in by_uid.items() if u.is_test}
    assert tests == {
        "tests/test_api.py::test_get", "tests/test_api.py::test_post", "tests/test_api.py::test_no_fixture",
        "tests/test_api.py::test_no_call", "tests/test_api.py::test_async", "tests/test_api.py::test_multiline",
        "tests/test_api.py::test_kwonly", "tests/test_api.py::test_param",
        "tests/test_api.py::test_reference_only", "tests/test_api.py::test_nested_call",
        "tests/test_api.py::TestClient.test_method", "tests/test_api.py::TestClient.test_method_calls",
        "tests/test_api.py::TestClient.test_database",
    }  # not the class TestClient, not the nested helper, not helper_uses_api
    assert by_uid["pkg/api.py::outer.inner"].name == "inner"
    assert by_uid["tests/test_api.py::TestClient.test_method"].name == "test_method"


def test_multiline_signature_header_doc_and_body(fixture_units) -> None:
    unit = {u.uid: u for u in fixture_units}["pkg/api.py::multi"]
    assert unit.lineno == 42
    assert unit.header == [(42, "def multi("), (43, "    first,"), (44, "    second=None,"),
                           (45, "    *rest,"), (46, "    key: int = 0,"), (47, ") -> tuple:")]
    assert unit.doc == "Multi-line signature."
    assert unit.doc_line == 48
    assert unit.body == [(49, "    return first, second, rest, key")]


def test_method_with_docstring(fixture_units) -> None:
    unit = {u.uid: u for u in fixture_units}["pkg/api.py::Client.fetch"]
    assert unit.header == [(19, "    def fetch(self, path):")]
    assert unit.doc == "Fetch a path relative to the base."
    assert unit.doc_line == 20
    assert unit.body == [(21, "        return get(self.base + path)")]  # the docstring is not body


def test_async_def_is_a_function_unit(fixture_units) -> None:
    unit = {u.uid: u for u in fixture_units}["tests/test_api.py::test_async"]
    assert unit.kind == "function" and unit.is_test
    assert unit.header == [(23, "async def test_async(db):")]
    assert unit.doc is None and unit.doc_line == 0
    assert unit.body == [(24, '    await api.aget("z")')]


def test_nested_function_is_its_own_unit(fixture_units) -> None:
    by_uid = {u.uid: u for u in fixture_units}
    inner = by_uid["pkg/api.py::outer.inner"]
    assert inner.header == [(35, "    def inner(y):")]
    assert inner.doc == "Inner helper: add one."
    outer = by_uid["pkg/api.py::outer"]
    # the outer body keeps the nested function's lines (the source a hit may show), blank lines dropped
    assert [n for n, _ in outer.body] == [35, 36, 37, 39]


def test_decorators_belong_to_the_header(fixture_units) -> None:
    unit = {u.uid: u for u in fixture_units}["tests/test_api.py::test_param"]
    assert unit.lineno == 40  # the def line
    assert unit.header == [(39, '@pytest.mark.parametrize("n", [1, 2])'), (40, "def test_param(n, db):")]


def test_class_unit_keeps_its_docstring_and_methods(fixture_units) -> None:
    unit = {u.uid: u for u in fixture_units}["pkg/api.py::Client"]
    assert unit.header == [(13, "class Client:")]
    assert unit.doc == "A client bound to a base URL."
    assert unit.body[0] == (16, "    def __init__(self, base):")


def test_text_holds_path_name_signature_doc_and_body(fixture_units) -> None:
    unit = {u.uid: u for u in fixture_units}["pkg/api.py::get"]
    assert unit.text().splitlines() == ["pkg/api.py", "get", "def get(url):", "Fetch a URL and return the body.",
                                        "    return url"]


def test_load_units_is_cached_per_root(fixture_repo) -> None:
    assert load_units(fixture_repo) is load_units(fixture_repo)


# --------------------------------------------------------------------------- edge cases


def test_one_line_def_and_same_line_docstring(tmp_path: Path) -> None:
    units = units_of(tmp_path, '''\
        def one(): return 1
        def two(): """Two on one line."""
        ''')
    assert units["one"].header == [(1, "def one(): return 1")] and units["one"].body == []
    assert units["one"].doc is None
    assert units["two"].doc == "Two on one line." and units["two"].doc_line == 2
    assert units["two"].body == []


def test_docstring_first_line_only_and_blank_docstrings(tmp_path: Path) -> None:
    units = units_of(tmp_path, '''\
        def long():
            """
            Summary line.

            More text.
            """
            return 1

        def blank():
            """   """
            return 2

        def not_a_doc():
            x = "a string later"
            return x
        ''')
    assert units["long"].doc == "Summary line."
    assert units["long"].doc_line == 2
    assert units["long"].body == [(7, "    return 1")]
    assert units["blank"].doc is None and units["blank"].doc_line == 0
    assert units["blank"].body == [(11, "    return 2")]  # the blank docstring is still not body
    assert units["not_a_doc"].doc is None


def test_duplicate_ids_first_wins(tmp_path: Path) -> None:
    (tmp_path / "dup.py").write_text("def f():\n    return 1\n\n\ndef f():\n    return 2\n", encoding="utf-8")
    units = load_units(tmp_path)
    assert [(u.uid, u.lineno) for u in units] == [("dup.py::f", 1)]


def test_non_utf8_bytes_do_not_stop_indexing(tmp_path: Path) -> None:
    (tmp_path / "latin.py").write_bytes(b"# caf\xe9\ndef ok():\n    return '\xe9'\n")
    assert "latin.py::ok" in {u.uid for u in load_units(tmp_path)}


def test_definitions_inside_compound_statements_are_units(tmp_path: Path) -> None:
    units = units_of(tmp_path, '''\
        import sys

        if sys.platform == "win32":
            def proxy_bypass(host):
                """Windows variant."""
                return host
        else:
            def proxy_bypass(host):
                """Posix variant."""
                return host

        try:
            import json
        except ImportError:
            def loads(text):
                return text

        class Path:
            if sys.version_info >= (3, 8):
                def size(self):
                    """Size in bytes."""
                    return 0
        ''')
    assert {"proxy_bypass", "loads", "Path", "Path.size"} <= set(units)


def test_comment_between_signature_and_docstring_is_not_header(tmp_path: Path) -> None:
    units = units_of(tmp_path, '''\
        class Item:
            @classmethod
            def from_parent(  # type: ignore[override]
                cls,
                parent,
            ) -> "Item":
                # incompatible signature due to imposed limits on subclass
                """The public named constructor."""
                return cls()
        ''')
    unit = units["Item.from_parent"]
    assert unit.doc == "The public named constructor."
    assert unit.header[-1] == (6, '    ) -> "Item":')


def test_definitions_under_every_compound_statement_are_units(tmp_path: Path) -> None:
    units = units_of(tmp_path, '''\
        import contextlib

        with contextlib.suppress(ImportError):
            def in_with():
                return 1

        for _ in range(1):
            def in_for():
                return 2
        else:
            def in_for_else():
                return 3

        while False:
            def in_while():
                return 4

        match 1:
            case 1:
                def in_case():
                    return 5

        try:
            pass
        except* ValueError:
            def in_except_star():
                return 6
        finally:
            def in_finally():
                return 7

        async def outer():
            async with contextlib.nullcontext():
                async for _ in aiter([]):
                    def in_async_for():
                        return 8

        x = [lambda: 9]  # a lambda is no unit
        ''')
    assert set(units) == {"in_with", "in_for", "in_for_else", "in_while", "in_case", "in_except_star",
                          "in_finally", "outer", "outer.in_async_for"}
