"""Tests for the ``pushbench`` command line (typer's CliRunner, in-process)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from pushbench import cli, config

TASK = "reposcan-requests-fixture-n010"


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def data(built_data: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point the CLI's default data folders at this session's fresh build."""
    monkeypatch.setattr(config, "MANIFESTS", built_data / "manifests")
    monkeypatch.setattr(config, "HIDDEN", built_data / "hidden")
    return built_data


def try_call(runner: CliRunner, call: str, task: str = TASK):
    return runner.invoke(cli.app, ["tools", "try", "--task", task, "--call", call])


def test_default_data_folders_are_in_the_project() -> None:
    assert config.MANIFESTS == config.ROOT / "data" / "manifests"
    assert config.HIDDEN == config.ROOT / "data" / "hidden"
    assert (config.ROOT / "params.yaml").is_file()


def test_tools_try_search_prints_a_page(runner, data) -> None:
    result = try_call(runner, 'search {"query": "test httpbin", "page": 1}')
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == 'search "test httpbin": page 1 of 5 (50 results)'
    assert lines[1].startswith("[1] tests/")
    assert "[10] " in result.output and "[11] " not in result.output


def test_tools_try_status_without_arguments(runner, data) -> None:
    result = try_call(runner, "status")
    assert result.exit_code == 0
    assert result.output.strip() == "status: 0 accepted (verified) of target 10; 1 of 30 steps used."


@pytest.mark.parametrize(("call", "fragment"), [
    ('search {"query": 1}', "ERROR: invalid arguments for search"),
    ("search {bad json", "ERROR: arguments are not valid JSON"),
    ('browse {"query": "x"}', "ERROR: unknown tool 'browse'"),
    ('submit {"ids": ["../x.py::f"]}', "ERROR: id '../x.py::f' contains '..'"),
])
def test_tools_try_a_bad_call_exits_2(runner, data, call: str, fragment: str) -> None:
    result = try_call(runner, call)
    assert result.exit_code == 2
    assert fragment in result.output


def test_tools_try_an_unknown_task(runner, data) -> None:
    result = try_call(runner, "status", task="reposcan-nope-fixture-n010")
    assert result.exit_code == 1  # a user error (2 is kept for "the tool refused the call")
    assert result.output.startswith("error: no task 'reposcan-nope-fixture-n010' in the manifests of reposcan")
    assert len(result.output.splitlines()) == 1


def test_tools_try_prints_the_observation_unchanged(runner, data, monkeypatch) -> None:
    from pushbench.tasks import get_family, load_tasks
    from pushbench.tools import ToolCall

    monkeypatch.setattr(cli, "console", Console(width=80))
    spec = next(t for t in load_tasks("reposcan") if t.task_id == TASK)
    env = get_family("reposcan").environment(spec)
    obs = env.execute(ToolCall("search", '{"query": "test httpbin", "page": 1}'))
    assert max(len(line) for line in obs.text.splitlines()) > 80  # the case that matters
    result = try_call(runner, 'search {"query": "test httpbin", "page": 1}')
    assert result.output.rstrip("\n") == obs.text


def test_show_task_prints_the_manifest_row(runner, data) -> None:
    result = runner.invoke(cli.app, ["show-task", TASK])
    assert result.exit_code == 0
    row = json.loads(result.output)
    assert row["task_id"] == TASK and row["budget"] == 30 and row["target"] == 10
    assert "valid" not in row


@pytest.mark.slow
def test_manifests_build_writes_files(runner, built_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "tmp"
    result = runner.invoke(cli.app, ["manifests", "build", "--family", "reposcan", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "reposcan: 36 tasks" in result.output  # one family: `make test` builds them all before the tests
    manifest = out / "manifests" / "reposcan.jsonl"
    assert manifest.read_bytes() == (built_data / "manifests" / "reposcan.jsonl").read_bytes()
    assert len(list((out / "hidden" / "reposcan").glob("*.json"))) == 36
    assert sorted(p.name for p in (out / "manifests").iterdir()) == ["reposcan.jsonl"]


def test_manifests_build_of_an_unknown_family_writes_nothing(runner, tmp_path: Path) -> None:
    result = runner.invoke(cli.app, ["manifests", "build", "--family", "nope", "--out", str(tmp_path / "o")])
    assert result.exit_code != 0
    assert not (tmp_path / "o").exists()


def test_snapshots_fetch_of_an_unknown_name_fails_cleanly(runner, tmp_path: Path) -> None:
    result = runner.invoke(cli.app, ["snapshots", "fetch", "--only", "nope", "--dest", str(tmp_path / "src")])
    assert result.exit_code == 1
    assert "error:" in result.output and "['nope']" in result.output
    assert not (tmp_path / "src").exists()


def test_a_smaller_grid_into_a_fuller_folder_says_so(runner, data, tmp_path: Path) -> None:
    out = tmp_path / "run"
    base = ["run", "--family", "reposcan", "--target", "10", "--model", "sim/perfect", "--out", str(out), "--no-progress"]
    assert runner.invoke(cli.app, [*base, "--limit", "2"]).exit_code == 0
    second = runner.invoke(cli.app, [*base, "--limit", "1"])
    assert second.exit_code == 0, second.output
    assert "holds 2 episodes, 1 of them not in this grid" in second.stderr
