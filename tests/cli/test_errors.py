"""Every command answers bad input with one line and a non-zero exit, never a traceback.

The table below holds at least one bad invocation per command of ``pushbench --help`` (a test
checks that no command is missing), run in-process with typer's CliRunner; a few run as real
subprocesses to see stderr, ``--debug`` and the project-root walk exactly as a user would.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

import pushbench
from pushbench import config
from pushbench.cli import app

TASK = "reposcan-requests-fixture-n010"
SRC = Path(pushbench.__file__).resolve().parents[1]

# (command path, arguments after it, a fragment of the one error line); "{tmp}" is a fresh folder
BAD = [
    ("", ["--nope"], "No such option: --nope"),
    ("run", ["--target", "abc", "--out", "{tmp}/o"], "--target takes whole numbers"),
    ("run", ["--target", "10", "--out", ""], "--out must name a run folder of its own"),
    ("run", ["--target", "7", "--out", "{tmp}/o"], "no reposcan task has target 7; targets that exist: 10, 25, 50, 100"),
    ("run", ["--target", "10,7", "--out", "{tmp}/o"], "no reposcan task has target 7"),
    ("run", ["--family", "nope", "--out", "{tmp}/o"], "unknown task family 'nope'; known: corpus, dataops, planning, reposcan"),
    ("run", ["--family", "rows", "--out", "{tmp}/o"], "SimLM has no mind for family 'rows'"),
    ("run", ["--controller", "standard,nope", "--out", "{tmp}/o"], "unknown controller 'nope' in --controller; known:"),
    ("run", ["--controller", "unitqgp", "--out", "{tmp}/o"], "controller 'unitqgp' needs a family whose tools play the role 'units'"),
    ("run", ["--memory", "nope", "--out", "{tmp}/o"], "unknown memory 'nope' in --memory; known: full"),
    ("run", ["--backend", "nope", "--out", "{tmp}/o"], "unknown backend 'nope' in --backend; known: native"),
    ("run", ["--model", "sim/nope", "--out", "{tmp}/o"], "unknown SimLM profile 'sim/nope'; known: sim/mini"),
    ("run", ["--model", "gpt4", "--out", "{tmp}/o"], "unknown model 'gpt4'; use sim/<profile>, openai/<model> or litellm/<provider>/<model>"),
    ("run", ["--workers", "0", "--out", "{tmp}/o"], "--workers must be at least 1"),
    ("run", ["--limit", "0", "--out", "{tmp}/o"], "--limit must be at least 1"),
    ("run", ["--seeds", "x", "--out", "{tmp}/o"], "Invalid value for '--seeds'"),
    ("run", [], "Missing option '--out'"),
    ("run", ["--executor", "nope", "--out", "{tmp}/o"], "nope"),
    ("run", ["--out", "{tmp}/o", "--format", "html"], "Invalid value for '--format'"),
    ("score", ["{tmp}/none"], "no episodes at"),
    ("summarize", ["{tmp}/none"], "no episodes at"),
    ("summarize", ["{tmp}/raw.jsonl"], "these episodes hold raw facts only"),
    ("summarize", ["{tmp}/raw.jsonl", "--by", "colour"], "unknown --by column colour; columns:"),
    ("experiment", ["nope"], "no experiment 'nope' in params.yaml; experiments:"),
    ("experiment", ["reposcan-main", "--model", "openai/gpt-4o"], "give its own --out folder"),
    ("estimate", ["nope"], "no experiment 'nope' in params.yaml; experiments:"),
    ("estimate", ["--like", "gpt-4o"], "--like takes a SimLM profile"),
    ("estimate", ["--prices", "{tmp}/none.yaml"], "none.yaml"),
    ("run", ["--model", "openai/no-such-model", "--max-cost", "1", "--out", "{tmp}/o"],
     "--max-cost needs a price for openai/no-such-model"),
    ("run", ["--model", "openai/gpt-4o", "--base-url", "http://127.0.0.1:9/v1", "--out", "{tmp}/o"],
     "openai/gpt-4o: cannot reach http://127.0.0.1:9/v1"),
    ("aggregate", [], "has no scored episodes at"),
    ("notebook", ["nope"], "no notebook 'nope'; notebooks: 00-calibration"),
    ("show-task", ["nope"], "no task 'nope' in the manifests of "),
    ("tools try", ["--task", "nope", "--call", "status"], "no task 'nope'"),
    ("snapshots fetch", ["--only", "nope", "--dest", "{tmp}/src"], "['nope']"),
    ("manifests build", ["--family", "reposcan", "--family", "nope", "--out", "{tmp}/o"], "unknown task family 'nope'"),
    ("serve-sim", ["--fault-rate", "2"], "fault-rate must be between 0 and 1"),
    ("serve-sim", ["--port", "0"], "Invalid value for '--port'"),
    ("serve-sim", ["--log-level", "loud"], "unknown --log-level 'loud'"),
    ("serve-mcp", ["--task", "nope", "--log", "{tmp}/log"], "no RepoScan task 'nope'"),
    ("agent run", ["--task", "nope", "--out", "{tmp}/o"], "no RepoScan task 'nope'"),
    ("agent run", ["--task", TASK, "--prompt", "nope", "--out", "{tmp}/o"], "unknown prompt 'nope'"),
    ("agent run", ["--task", TASK, "--agent", "nope", "--out", "{tmp}/o"], "unknown agent 'nope'"),
    ("agent run", ["--task", TASK, "--agent", "codex", "--with-sim", "--out", "{tmp}/o"], "--with-sim and --sim-model"),
    ("agent run", ["--task", TASK, "--agent", "{tmp}/none.yaml", "--out", "{tmp}/o"], "cannot read the declaration"),
    ("agent grid", ["--targets", "x", "--out", "{tmp}/o"], "--targets takes whole numbers"),
    ("agent grid", ["--targets", "7", "--out", "{tmp}/o"], "N = 7"),
    ("agent deltas", ["{tmp}/none"], "cannot compute deltas: no episodes at"),
    ("agent install", ["nope"], "unknown products nope; declared: claude-code"),
    ("agent install", ["--declaration", "{tmp}/none.yaml"], "cannot read the declaration"),
    ("agent list", ["--format", "html"], "Invalid value for '--format'"),
    ("view", ["{tmp}/none", "--out", "{tmp}/o"], "is not a folder"),
    ("fork", ["--episode", "x", "--run", "{tmp}/none", "--at", "3", "--controller", "stateqgp", "--out", "{tmp}/o"],
     "is not a folder"),
    ("memory recall", ["{tmp}/none", "--budget", "4000"], "has no episodes.jsonl (not a run folder)"),
    ("memory recall", ["{tmp}", "--budget", "4000", "--memory", "nope"], "unknown memory 'nope'"),
    ("memory recall", ["{tmp}/none", "--budget", "x"], "Invalid value for '--budget'"),
]


@pytest.fixture
def data(built_data: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The CLI's data folders point at this session's build (``--data-root`` for the black-box
    commands, whose defaults are bound at import); no run folder exists yet."""
    monkeypatch.setattr(config, "MANIFESTS", built_data / "manifests")
    monkeypatch.setattr(config, "HIDDEN", built_data / "hidden")
    monkeypatch.setattr(config, "RUNS", tmp_path / "runs")
    return built_data


def _argv(path: str, args: list[str], tmp: Path, data: Path) -> list[str]:
    extra = ["--data-root", str(data)] if path.startswith(("agent run", "agent grid", "serve-mcp")) else []
    return [*path.split(), *(a.replace("{tmp}", str(tmp)) for a in args), *extra]


def assert_one_line(result, fragment: str) -> None:
    assert result.exit_code not in (0, None), result.output
    assert "Traceback" not in result.output
    lines = result.output.splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith("error: ") and fragment in lines[0], lines[0]


@pytest.mark.parametrize(("path", "args", "fragment"), BAD, ids=[f"{p or 'root'}:{' '.join(a)[:40]}" for p, a, _ in BAD])
def test_bad_input_is_one_line_and_a_non_zero_exit(data, tmp_path: Path, path: str, args: list[str],
                                                   fragment: str) -> None:
    (tmp_path / "raw.jsonl").write_text('{"episode_id": "e", "family": "reposcan", "target": 10}\n', encoding="utf-8")
    result = CliRunner().invoke(app, _argv(path, args, tmp_path, data))
    assert_one_line(result, fragment)
    assert result.stderr.startswith("error: ")  # on stderr, not mixed into a table on stdout
    assert not (tmp_path / "o").exists()  # nothing written, not even an empty episodes.jsonl


def _commands(group, prefix: str = "") -> list[str]:
    found = []
    for name, command in group.commands.items():
        path = f"{prefix} {name}".strip()
        found += _commands(command, path) if hasattr(command, "commands") else [path]
    return found


def test_every_command_has_a_bad_input_case() -> None:
    import typer.main

    commands = _commands(typer.main.get_command(app))
    assert len(commands) >= 15
    assert sorted(set(commands) - {p for p, _, _ in BAD}) == []


@pytest.mark.parametrize("argv", [["run", "--out", "x"], ["show-task", TASK], ["experiment", "reposcan-main"],
                                  ["aggregate"], ["manifests", "build"], ["snapshots", "fetch"], ["notebook", "x"],
                                  ["tools", "try", "--task", TASK, "--call", "status"], ["score", "x"],
                                  ["agent", "grid", "--out", "x"], ["serve-mcp", "--task", TASK, "--log", "x"],
                                  ["agent", "install"], ["agent", "list"]])
def test_outside_the_project_every_command_says_so(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                  argv: list[str]) -> None:
    monkeypatch.setattr(config, "FOUND", None)
    monkeypatch.delenv("PUSHBENCH_ROOT", raising=False)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, argv)
    assert_one_line(result, "not inside a PushBench checkout")
    assert "params.yaml and dvc.yaml" in result.output and "PUSHBENCH_ROOT" in result.output
    assert list(tmp_path.iterdir()) == []


def test_a_bug_is_one_line_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from pushbench.cli import data

    def broken(task_id: str):
        return {}["family"]

    monkeypatch.setattr(data, "find_task", broken)
    result = CliRunner().invoke(app, ["show-task", TASK])
    assert_one_line(result, "unexpected KeyError: 'family' (a bug; rerun with --debug for the traceback)")


def test_no_command_shows_the_help() -> None:
    result = CliRunner().invoke(app, [])
    assert result.exit_code == 2 and "Commands" in result.output and "error:" not in result.output


# --------------------------------------------------------------------------- as a user runs it


def _cli(*argv: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k not in ("PUSHBENCH_ROOT", "PUSHBENCH_DEBUG")}
    environ["PYTHONPATH"] = os.pathsep.join([str(SRC), environ.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-m", "pushbench.cli", *argv], cwd=cwd, capture_output=True, text=True,
                          env={**environ, **env}, timeout=120)


def test_a_subprocess_prints_one_line_and_debug_shows_the_traceback(tmp_path: Path) -> None:
    plain = _cli("run", "--target", "abc", "--out", str(tmp_path / "o"), cwd=config.ROOT)
    assert plain.returncode == 1 and plain.stdout == ""
    assert plain.stderr.splitlines() == ["error: --target takes whole numbers separated by commas (e.g. 10,25); "
                                         "got 'abc'"]
    debug = _cli("--debug", "run", "--target", "abc", "--out", str(tmp_path / "o"), cwd=config.ROOT)
    assert debug.returncode != 0 and "Traceback" in debug.stderr and "--target takes whole numbers" in debug.stderr
    assert not (tmp_path / "o").exists()


def test_the_lean_mcp_server_outside_a_checkout_names_pushbench_root(tmp_path: Path) -> None:
    environ = {k: v for k, v in os.environ.items() if k != "PUSHBENCH_ROOT"}
    environ["PYTHONPATH"] = os.pathsep.join([str(SRC), environ.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, "-m", "pushbench.harness.mcp_main", "serve-mcp", "--task", TASK, "--log", "log"],
                          cwd=tmp_path, capture_output=True, text=True, env=environ, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 1 and len(done.stderr.splitlines()) == 1
    assert done.stderr.startswith("error: not inside a PushBench checkout") and "PUSHBENCH_ROOT" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_the_root_is_found_from_a_subfolder_and_refused_outside(tmp_path: Path) -> None:
    inside = _cli("show-task", "--help", cwd=config.ROOT / "src" / "pushbench")
    assert inside.returncode == 0
    found = _cli("experiment", "nope", cwd=config.ROOT / "src" / "pushbench")
    assert found.stderr.startswith("error: no experiment 'nope' in params.yaml; experiments: ")
    outside = _cli("experiment", "reposcan-main", cwd=tmp_path)
    assert outside.returncode == 1 and len(outside.stderr.splitlines()) == 1
    assert outside.stderr.startswith("error: not inside a PushBench checkout")
    wrong = _cli("experiment", "reposcan-main", cwd=tmp_path, PUSHBENCH_ROOT=str(tmp_path))
    assert wrong.stderr.strip() == f"error: PUSHBENCH_ROOT={tmp_path} holds no params.yaml; point it at a " \
                                   "PushBench checkout or unset it"
