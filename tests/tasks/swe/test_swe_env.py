"""SWE-lite tools on a tiny snapshot: reading, searching, exact edits, sandboxed tests, isolation."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pushbench.sandbox import jail
from pushbench.tasks.swe.pool import close_idle
from pushbench.tasks.swe.runs import Workspace, run_tests
from pushbench.tasks.swe.units import inject
from pushbench.tools import ToolCall
from pushbench.tasks.swe.env import SweEnv
from pushbench.verifier import Verifier

from swe_toy import CLAMP_FAULT, ENV_UNIT, released, toy_spec, write_toy


@pytest.fixture
def make_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PUSHBENCH_SWE_TEST_CACHE", "off")
    root = write_toy(tmp_path / "snaps")
    made: list[SweEnv] = []

    def make(units: int = 1, budget: int = 30) -> SweEnv:
        spec = toy_spec(units, budget)
        ws = Workspace("toy", root)
        inject(ws, [CLAMP_FAULT])
        faults = {"U01": CLAMP_FAULT, "U02": ENV_UNIT}
        env = SweEnv(spec, Verifier(spec.task_id, spec.target, lambda _: False, retry_rejected=True), ws,
                     {k: v for k, v in faults.items() if k in [u["id"] for u in spec.settings["units"]]})
        made.append(env)
        return env

    yield make
    for env in made:
        env.workspace.close()


def call(env: SweEnv, name: str, **args):
    return env.execute(ToolCall(name, json.dumps(args)))


def test_a_whole_unit_fail_edit_pass_submit(make_env) -> None:
    env = make_env()
    assert "U01 [assertion]" in call(env, "list_units").text
    first = call(env, "run_tests", unit="U01")
    assert first.text.startswith("checker U01: FAIL") and "test_clamp" in first.text
    assert "src/toy/mathx.py:3: in clamp" not in first.text  # the failure is an assertion in the test
    hits = call(env, "search_files", query="def clamp(")
    assert "src/toy/mathx.py:1: def clamp(value, low, high):" in hits.text
    seen = call(env, "read_file", path="src/toy/mathx.py", start=1, end=4, unit="U01")
    assert "    3|     if value >= low:" in seen.text and seen.text.startswith("src/toy/mathx.py lines 1-4 of 15")
    edited = call(env, "edit", path="src/toy/mathx.py", old="    if value >= low:", new="    if value < low:")
    assert edited.ok and "changed at line 3" in edited.text
    assert env.records["U01"].changed_since_check  # attributed to the unit named last
    assert call(env, "run_tests", unit="U01").text.startswith("checker U01: PASS")
    assert call(env, "submit", unit="U01").text == "submit U01: accepted (checker passed)."
    assert call(env, "submit", unit="U01").text.startswith("submit U01: duplicate")
    assert env.verifier.valid_count == 1 and env.checker_runs == 2


def test_submit_runs_the_tests_and_rejects_a_broken_unit(make_env) -> None:
    env = make_env()
    obs = call(env, "submit", unit="U01")
    assert obs.text.startswith("submit U01: rejected") and "assert" in obs.text
    assert env.verifier.valid_count == 0


@pytest.mark.parametrize("old, message", [("if value >= high:", "not found"), ("return", "occurs 4 times"),
                                          ("", "invalid arguments")])
def test_edit_needs_exactly_one_occurrence(make_env, old: str, message: str) -> None:
    env = make_env()
    obs = call(env, "edit", path="src/toy/mathx.py", old=old, new="x")
    assert not obs.ok and message in obs.text


@pytest.mark.parametrize("path", ["../outside.py", "/etc/passwd", "src/../../outside.py", "planted/secret.py",
                                  "src/toy/link.py", "src/toy/nope.py"])
def test_reads_and_edits_outside_the_workspace_fail(make_env, tmp_path: Path, path: str) -> None:
    env = make_env()
    outside = tmp_path / "outside.py"
    outside.write_text("SECRET = 'zebracorn'\n", encoding="utf-8")
    os.symlink(tmp_path, env.workspace.root / "planted")  # a link planted in the copy
    os.symlink(outside, env.workspace.root / "src" / "toy" / "link.py")
    read = call(env, "read_file", path=path)
    edit = call(env, "edit", path=path, old="SECRET", new="LEAK")
    assert not read.ok and not edit.ok and read.text.startswith("ERROR:")
    assert "zebracorn" not in read.text + edit.text
    assert outside.read_text(encoding="utf-8") == "SECRET = 'zebracorn'\n"
    assert "zebracorn" not in call(env, "search_files", query="SECRET").text  # links are not searched


def test_a_test_process_cannot_see_api_keys(make_env, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-parent-secret-4711")
    env = make_env(units=2)
    obs = call(env, "run_tests", unit="U02")
    line = next(l for l in obs.text.splitlines() if l.startswith("ENVIRONMENT "))
    seen = json.loads(line.removeprefix("ENVIRONMENT "))
    assert os.environ["OPENAI_API_KEY"] == "sk-parent-secret-4711"
    assert "OPENAI_API_KEY" not in seen and "sk-parent-secret" not in obs.text
    assert set(seen) <= {"PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "PYTHONPYCACHEPREFIX", "PYTHONHASHSEED",
                         "PYTHONUNBUFFERED", "PYTHONPATH", "PYTEST_DISABLE_PLUGIN_AUTOLOAD", "PYTEST_CURRENT_TEST",
                         "PYTEST_VERSION", "PWD"}
    assert seen["HOME"] == "<tmp>"  # HOME is inside the workspace (shown path-free)
    assert seen["PYTHONPYCACHEPREFIX"] == "<bytecode>"  # bytecode goes outside the copy (shown path-free)


def test_bytecode_never_shadows_an_edit_and_leaves_with_the_workspace(tmp_path: Path) -> None:
    """Same-size edits within one second: each test run must see the source as it is now."""
    ws = Workspace("toy", write_toy(tmp_path / "snaps"))
    mirror = ws.bytecode
    source = ws.read("src/toy/mathx.py")
    flipped = source.replace("if value < low:", "if value > low:")  # same size, breaks clamp
    outcomes = []
    for text in (source, flipped, source, flipped):
        ws.write("src/toy/mathx.py", text)
        outcomes.append(run_tests(ws, ["tests/test_mathx.py::test_clamp"], cache=None).passed)
    assert outcomes == [True, False, True, False]
    assert list(mirror.rglob("*.pyc")) and not list(ws.root.rglob("*.pyc"))  # compiled, but not into the copy
    ws.close()
    assert not ws.base.exists()


def test_nothing_of_the_episode_remains_when_it_ends(make_env) -> None:
    env = make_env()
    base = env.workspace.base
    assert base.is_dir()
    call(env, "final", count=0)
    assert env.done and released(env.workspace)  # reset for the next episode (tasks.swe.pool), or removed
    close_idle()
    assert not base.exists()


def test_bad_calls_are_errors_not_crashes(make_env) -> None:
    env = make_env()
    for name, args in [("run_tests", {"unit": "U99"}), ("run_tests", {"unit": "../x"}), ("read_file", {"path": ""}),
                       ("read_file", {"path": "src/toy/mathx.py", "start": 999}), ("search_files", {"query": "a\nb"}),
                       ("edit", {"path": "src/toy/mathx.py", "old": "x\x00", "new": ""}), ("nope", {})]:
        obs = env.execute(ToolCall(name, json.dumps(args)))
        assert not obs.ok and obs.text.startswith("ERROR:"), (name, args, obs.text)
    assert env.steps == 7 and not env.done


def test_without_the_jail_swe_lite_refuses_unless_the_weak_sandbox_is_chosen(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jail, "jail_problem", lambda: "bubblewrap (bwrap) is not installed")
    monkeypatch.delenv(jail.WEAK_SANDBOX_ENV, raising=False)
    root = write_toy(tmp_path / "snaps")
    with pytest.raises(jail.JailUnavailable, match="not installed; set PUSHBENCH_WEAK_SANDBOX=1"):
        Workspace("toy", root)
    monkeypatch.setenv(jail.WEAK_SANDBOX_ENV, "1")
    ws = Workspace("toy", root)
    try:
        assert not ws.jailed and run_tests(ws, ["tests/test_mathx.py::test_clamp"], cache=None).passed
    finally:
        ws.close()
