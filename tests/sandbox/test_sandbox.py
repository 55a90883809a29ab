"""The sandbox: confined paths, a scrubbed environment, limits and timeouts, atomic writes, the jail."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from pushbench.sandbox import (JailUnavailable, Limits, PathRefused, UnencodableText, clean_env, jail, require_jail,
                               resolve_inside, run_sandboxed, write_text_atomic)


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


# --- atomic, encode-first writes ------------------------------------------------------------------

def test_an_unencodable_text_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    target = tmp_path / "mod.py"
    target.write_text("x = 1\n", encoding="utf-8")
    with pytest.raises(UnencodableText, match="surrogate"):
        write_text_atomic(target, "x = '\ud800'\n")
    assert target.read_bytes() == b"x = 1\n" and [p.name for p in tmp_path.iterdir()] == ["mod.py"]


def test_an_atomic_write_keeps_the_mode_and_sets_the_mtime(tmp_path: Path) -> None:
    target = tmp_path / "run.sh"
    target.write_text("old\n", encoding="utf-8")
    target.chmod(0o751)
    write_text_atomic(target, "new ü\n", mtime_ns=123 * 10**9)
    assert target.read_text(encoding="utf-8") == "new ü\n"
    assert oct(target.stat().st_mode & 0o777) == oct(0o751) and target.stat().st_mtime_ns == 123 * 10**9
    assert [p.name for p in tmp_path.iterdir()] == ["run.sh"]


# --- the jail -------------------------------------------------------------------------------------

def test_without_bubblewrap_runs_are_refused_unless_the_weak_sandbox_is_chosen(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jail, "jail_problem", lambda: "bubblewrap (bwrap) is not installed")
    monkeypatch.delenv(jail.WEAK_SANDBOX_ENV, raising=False)
    with pytest.raises(JailUnavailable) as refused:
        require_jail()
    message = str(refused.value)
    assert "\n" not in message and "not installed" in message and "PUSHBENCH_WEAK_SANDBOX=1" in message
    monkeypatch.setenv(jail.WEAK_SANDBOX_ENV, "1")
    assert require_jail() is False


@pytest.mark.skipif(jail.jail_problem() is not None, reason="no bubblewrap jail here")
def test_the_jail_sees_only_its_binds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-should-not-leak")
    (tmp_path / "rw").mkdir()
    python, _ = jail.interpreter()
    code = ("import json, os, sys; open('/pushbench-jail/rw/out.txt', 'w').write('ok'); "
            "print(json.dumps([sorted(os.listdir('/')), sorted(os.listdir('/pushbench-jail')), os.getpid(), "
            "open('/proc/1/environ').read(), sys.prefix]))")
    result = jail.run_jailed([python, "-c", code], [jail.Bind(tmp_path / "rw", "/pushbench-jail/rw", True)],
                             "/pushbench-jail/rw", {"PATH": "/usr/bin:/bin"})
    top, inside, pid, environ, prefix = json.loads(result.output)
    system = {"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "proc", "dev", "tmp", "pushbench-jail"}
    assert set(top) <= system | {Path(sys.base_prefix).parts[1]}  # only system folders, the interpreter, binds
    assert inside == sorted(["rw", *(["venv"] if sys.prefix != sys.base_prefix else [])])
    assert pid <= 3 and "sk-test" not in environ and environ == "PATH=/usr/bin:/bin\x00"
    assert (tmp_path / "rw" / "out.txt").read_text() == "ok"
    assert prefix == (jail.VENV if sys.prefix != sys.base_prefix else sys.prefix)


def test_a_jail_bind_must_live_under_the_jail_folder(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="under /pushbench-jail"):
        jail.run_jailed(["true"], [jail.Bind(tmp_path, "/data")], "/", {})


@pytest.mark.skipif(jail.jail_problem() is not None, reason="no bubblewrap jail here")
def test_a_hanging_jail_is_killed_with_everything_it_started(tmp_path: Path) -> None:
    token = f"jail-hang-{os.getpid()}"
    python, _ = jail.interpreter()
    code = ("import os, subprocess, sys, time; "
            f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)', {token!r}], start_new_session=True); "
            "print('started', flush=True); time.sleep(60)")
    result = jail.run_jailed([python, "-c", code], [], "/", {"PATH": "/usr/bin:/bin"}, Limits(wall_seconds=2.0))
    assert result.timed_out and "started" in result.output
    time.sleep(0.2)
    left = [p.name for p in Path("/proc").iterdir() if p.name.isdigit() and _cmdline_has(p, token)]
    assert not left


def _cmdline_has(proc: Path, token: str) -> bool:
    try:
        return token.encode() in (proc / "cmdline").read_bytes()
    except OSError:
        return False


@pytest.mark.skipif(jail.jail_problem() is not None, reason="no bubblewrap jail here")
def test_a_project_inside_a_system_folder_is_covered(monkeypatch: pytest.MonkeyPatch) -> None:
    shown = Path("/usr/share")  # stands for a project kept under /usr
    assert any(shown.iterdir())
    monkeypatch.setattr(jail, "masked_paths", lambda system: [shown])
    python, _ = jail.interpreter()
    result = jail.run_jailed([python, "-c", "import os; print(os.listdir('/usr/share'), os.path.isdir('/usr/lib'))"],
                             [], "/", {"PATH": "/usr/bin"})
    assert result.output.split() == ["[]", "True"], result.output


def test_masked_paths_are_the_project_folders_under_system_ones(monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Path) -> None:
    from pushbench import config

    monkeypatch.setattr(config, "ROOT", tmp_path / "proj")
    monkeypatch.setattr(config, "DATA", tmp_path / "proj" / "data")
    monkeypatch.setattr(config, "SNAPSHOT_SRC", tmp_path / "elsewhere" / "src")
    assert jail.masked_paths([Path("/usr")]) == []
    assert jail.masked_paths([tmp_path / "proj"]) == [(tmp_path / "proj").resolve(),
                                                       (tmp_path / "proj" / "data").resolve()]
