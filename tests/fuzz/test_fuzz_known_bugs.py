"""Regression tests: minimal reproducers of the bugs the fuzz found, each a call an agent can make.

Found as failures (deep nesting raised RecursionError in argument parsing; a lone surrogate in a
path raised UnicodeEncodeError, and in an edit's ``new`` emptied the file; a path part over 255
bytes raised ENAMETOOLONG); each is now a clean ``ERROR:`` observation that changes nothing. A new
bug found by the fuzz goes here first as ``xfail(strict=True)`` with a ``known_bug`` hold-back.
"""

from __future__ import annotations

from typing import Any

import pytest

from pushbench import config
from pushbench.tasks import get_family, load_tasks, manifest_path
from pushbench.tools.base import Observation, ToolCall

from fuzzkit import deep_arguments


def fresh_env(family: str) -> Any:
    if not manifest_path(family).is_file() or not (config.SNAPSHOT_SRC / "requests").is_dir():
        pytest.skip(f"no {family} manifest or snapshots")
    task = load_tasks(family)[0]
    return get_family(family).environment(task.model_copy(update={"budget": 100}))


def clean_error(env: Any, call: ToolCall) -> Observation:
    """The call must give an ``ERROR:`` observation and no tool failure."""
    try:
        obs = env.execute(call)
    finally:
        env.end("test-cleanup")
    assert not obs.ok and obs.text.startswith("ERROR:"), obs.text
    assert env.tool_failures == []
    return obs


@pytest.mark.parametrize("form", ["json-text", "parsed"])
def test_deeply_nested_arguments_are_a_clean_error(form: str) -> None:
    text, value = deep_arguments()
    clean_error(fresh_env("rows"), ToolCall("rows", text if form == "json-text" else value))


@pytest.mark.parametrize("tool,args", [("read_file", {"path": "\ud800"}),
                                       ("edit", {"path": "src/\ud800.py", "old": "a", "new": "b"})])
def test_swe_surrogate_path_is_a_clean_error(tool: str, args: dict[str, Any]) -> None:
    clean_error(fresh_env("swe"), ToolCall(tool, args))


def test_dataops_surrogate_path_is_a_clean_error() -> None:
    clean_error(fresh_env("dataops"), ToolCall("inspect", {"unit": "U01", "path": "\ud800"}))


@pytest.mark.parametrize("family", ["swe", "dataops"])
def test_surrogate_edit_is_refused_and_changes_nothing(family: str) -> None:
    env = fresh_env(family)
    if family == "swe":
        path, unit = next(iter(env.faults.values())).path, ""
        target = env.workspace.path(path)
    else:
        unit = next(u for u, e in env.expected.items() if "file" in e)
        path = env.expected[unit]["file"]
        target = env.unit_dir(unit) / path
    before = target.read_text(encoding="utf-8")
    old = before.splitlines()[0]
    args = {"path": path, "old": old, "new": "\ud800"}
    try:
        obs = env.execute(ToolCall("edit", {**args, "unit": unit} if unit else args))
        after = target.read_text(encoding="utf-8")
    finally:
        env.end("test-cleanup")
    assert not obs.ok and env.tool_failures == []
    assert after == before


@pytest.mark.parametrize("family,tool,args", [
    ("swe", "read_file", {"path": "\u00e9" * 150}),
    ("swe", "read_file", {"path": "a" * 256}),
    ("dataops", "inspect", {"unit": "U01", "path": "\u00e9" * 200}),
])
def test_an_overlong_file_name_is_a_clean_error(family: str, tool: str, args: dict[str, Any]) -> None:
    clean_error(fresh_env(family), ToolCall(tool, args))
