"""The sandbox: confined paths, a scrubbed environment, limits and timeouts for child processes."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from pushbench.sandbox import Limits, PathRefused, clean_env, resolve_inside, run_sandboxed


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "mod.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "outside.txt").write_text("secret\n", encoding="utf-8")
    os.symlink(tmp_path / "outside.txt", root / "pkg" / "link.txt")
    os.symlink(tmp_path, root / "up")
    return root


def test_paths_inside_the_workspace_resolve(workspace: Path) -> None:
    assert resolve_inside(workspace, "pkg/mod.py") == workspace.resolve() / "pkg" / "mod.py"
    assert resolve_inside(workspace, "./pkg//mod.py") == workspace.resolve() / "pkg" / "mod.py"


@pytest.mark.parametrize("bad, reason", [
    ("../outside.txt", "'..'"), ("pkg/../../outside.txt", "'..'"), ("/etc/passwd", "absolute"),
    ("C:/x.py", "absolute"), ("pkg/link.txt", "symbolic link"), ("up/outside.txt", "symbolic link"),
    ("pkg/mod.py\x00", "control"), ("", "empty"), (".", "workspace itself"),
])
def test_paths_that_leave_or_cannot_be_proven_inside_are_refused(workspace: Path, bad: str, reason: str) -> None:
    with pytest.raises(PathRefused, match=reason):
        resolve_inside(workspace, bad)


def test_the_child_environment_is_built_from_scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-should-not-leak")
    monkeypatch.setenv("SOME_TOKEN", "tok")
    env = clean_env(tmp_path, [tmp_path / "src"], {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert set(env) == {"PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "PYTHONDONTWRITEBYTECODE",
                        "PYTHONHASHSEED", "PYTHONUNBUFFERED", "PYTHONPATH", "PYTEST_DISABLE_PLUGIN_AUTOLOAD"}
    code = "import json, os; print(json.dumps(dict(os.environ)))"
    result = run_sandboxed([sys.executable, "-c", code], tmp_path, tmp_path, env)
    seen = json.loads(result.output)
    assert "OPENAI_API_KEY" not in seen and "SOME_TOKEN" not in seen
    assert seen["HOME"] == str(tmp_path) and "sk-test" not in result.output


def test_cwd_outside_the_workspace_is_refused(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    with pytest.raises(PathRefused):
        run_sandboxed([sys.executable, "-c", "pass"], tmp_path / "ws", tmp_path, clean_env(tmp_path))


def test_a_hanging_child_is_killed_at_the_wall_limit(tmp_path: Path) -> None:
    limits = Limits(wall_seconds=1.0)
    result = run_sandboxed([sys.executable, "-c", "import time; print('started', flush=True); time.sleep(30)"],
                           tmp_path, tmp_path, clean_env(tmp_path), limits)
    assert result.timed_out and result.returncode is None and "started" in result.output


def test_rlimits_apply_in_the_child(tmp_path: Path) -> None:
    code = ("import resource; print(resource.getrlimit(resource.RLIMIT_CPU)[0], "
            "resource.getrlimit(resource.RLIMIT_AS)[0], resource.getrlimit(resource.RLIMIT_NOFILE)[0])")
    limits = Limits(cpu_seconds=7, memory_bytes=900 * 1024**2, open_files=99)
    result = run_sandboxed([sys.executable, "-c", code], tmp_path, tmp_path, clean_env(tmp_path), limits)
    assert result.output.split() == ["7", str(900 * 1024**2), "99"]


def test_memory_hungry_child_fails_without_hurting_the_parent(tmp_path: Path) -> None:
    limits = Limits(memory_bytes=300 * 1024**2)
    result = run_sandboxed([sys.executable, "-c", "x = bytearray(1024**3)"], tmp_path, tmp_path,
                           clean_env(tmp_path), limits)
    assert result.returncode != 0 and "MemoryError" in result.output


def test_output_is_capped(tmp_path: Path) -> None:
    result = run_sandboxed([sys.executable, "-c", "print('x' * 500_000)"], tmp_path, tmp_path, clean_env(tmp_path))
    assert result.truncated and len(result.output) <= 200_000
