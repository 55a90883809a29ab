"""Verifier integrity and writes that cannot half-happen (issue 20, parts 2 and 3).

* Editing the targeted test (its body replaced by ``return``) can never pass a unit: the tests are
  reset to the snapshot before every check, and the observation says so.
* The poisoning sequence: ``edit`` with a lone surrogate as ``new`` leaves the file as it was (an
  ``ERROR:`` observation); the test cache never holds a result for a tree that was not on disk;
  a later, correct episode is accepted.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from pushbench.tasks.swe import runs
from pushbench.tasks.swe.env import SweEnv
from pushbench.tasks.swe.runs import Workspace, run_tests
from pushbench.tasks.swe.units import inject
from pushbench.tools import ToolCall
from pushbench.verifier import Verifier

from swe_toy import CLAMP_FAULT, TESTS, toy_spec

CLAMP_BODY = "    assert clamp(5, 0, 10) == 5\n    assert clamp(-3, 0, 10) == 0\n    assert clamp(12, 0, 10) == 10"



@pytest.fixture
def make_env(snapshots: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PUSHBENCH_SWE_TEST_CACHE", str(tmp_path / "cache"))
    made: list[SweEnv] = []

    def make() -> SweEnv:
        spec = toy_spec(1, budget=50)
        ws = Workspace("toy", snapshots)
        inject(ws, [CLAMP_FAULT])
        env = SweEnv(spec, Verifier(spec.task_id, spec.target, lambda _: False, retry_rejected=True), ws,
                     {"U01": CLAMP_FAULT})
        made.append(env)
        return env

    yield make
    for env in made:
        env.workspace.close()


def call(env: SweEnv, name: str, **args):
    return env.execute(ToolCall(name, json.dumps(args)))


def test_an_emptied_test_never_passes_the_unit(make_env) -> None:
    env = make_env()
    edited = call(env, "edit", path="tests/test_mathx.py", old=CLAMP_BODY, new="    return")
    assert edited.ok  # editing a test is allowed...
    obs = call(env, "submit", unit="U01")
    assert obs.text.startswith("submit U01: rejected")  # ...but the library fault is still there
    assert "tests/test_mathx.py reset to the original before this run" in obs.text
    assert env.workspace.read("tests/test_mathx.py") == TESTS and env.verifier.valid_count == 0
    call(env, "edit", path="tests/test_mathx.py", old=CLAMP_BODY, new="    return")
    assert call(env, "run_tests", unit="U01").text.startswith("checker U01: FAIL")  # run_tests resets too
    call(env, "edit", path="src/toy/mathx.py", old="    if value >= low:", new="    if value < low:")
    fixed = call(env, "submit", unit="U01")
    assert fixed.text == "submit U01: accepted (checker passed)." and env.verifier.valid_count == 1


def test_conftest_and_test_config_edits_are_reset(snapshots: Path) -> None:
    ws = Workspace("toy", snapshots)
    try:
        ws.write("pyproject.toml", "[tool.pytest.ini_options]\naddopts = '-p no:python'\n")
        ws.write("src/toy/mathx.py", ws.read("src/toy/mathx.py") + "\n# a library edit stays\n")
        assert ws.reset_tests(["tests/test_mathx.py::test_clamp"]) == ["pyproject.toml"]
        assert ws.read("pyproject.toml") == "[tool.pytest.ini_options]\n"
        assert ws.read("src/toy/mathx.py").endswith("# a library edit stays\n")
        assert set(ws.written) == {"src/toy/mathx.py"}
    finally:
        ws.close()


def cached_keys(folder: Path) -> set[str]:
    return {p.stem for p in folder.glob("*.json")}


def test_the_poisoning_sequence_changes_nothing(make_env, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    env = make_env()
    tests = list(CLAMP_FAULT.tests)
    states = []  # the cache key of every tree that was really on disk when a run happened
    assert call(env, "run_tests", unit="U01").text.startswith("checker U01: FAIL")
    states.append(runs._cache_key(env.workspace, tests))
    before = (env.workspace.root / "src/toy/mathx.py").read_bytes()
    obs = env.execute(ToolCall("edit", '{"path": "src/toy/mathx.py", "old": "    if value >= low:", '
                                       '"new": "\\ud800"}'))  # valid JSON: a lone surrogate
    assert not obs.ok and obs.text.startswith("ERROR:")
    assert (env.workspace.root / "src/toy/mathx.py").read_bytes() == before  # not emptied, not changed
    assert not list((env.workspace.root / "src/toy").glob(".*.tmp"))  # no temporary file left behind
    assert call(env, "run_tests", unit="U01").text.startswith("checker U01: FAIL")
    states.append(runs._cache_key(env.workspace, tests))
    assert cached_keys(cache) <= set(states)  # no result for a state that never existed
    call(env, "edit", path="src/toy/mathx.py", old="    if value >= low:", new="    if value < low:")
    assert call(env, "submit", unit="U01").text == "submit U01: accepted (checker passed)."
    later = make_env()  # a later, correct episode over the same cache
    call(later, "edit", path="src/toy/mathx.py", old="    if value >= low:", new="    if value < low:")
    assert call(later, "submit", unit="U01").text == "submit U01: accepted (checker passed)."


def test_a_result_is_not_stored_when_the_tree_changed_during_the_run(snapshots: Path, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    ws = Workspace("toy", snapshots)
    real = runs._execute

    def drifting(ws_: Workspace, nodeids, limits):
        result = real(ws_, nodeids, limits)
        (ws_.root / "src/toy/mathx.py").write_text("broken = True\n", encoding="utf-8")  # the restore missed it
        return result

    monkeypatch.setattr(runs, "_execute", drifting)
    try:
        assert run_tests(ws, list(CLAMP_FAULT.tests), cache=tmp_path / "cache").passed
        assert not list((tmp_path / "cache").glob("*.json"))
    finally:
        ws.close()


def test_the_cache_key_follows_the_bytes_on_disk(snapshots: Path) -> None:
    ws = Workspace("toy", snapshots)
    try:
        tests = list(CLAMP_FAULT.tests)
        pristine = runs._cache_key(ws, tests)
        ws.write("src/toy/mathx.py", ws.read("src/toy/mathx.py") + "\n")
        edited = runs._cache_key(ws, tests)
        ws.write("src/toy/mathx.py", ws.read("src/toy/mathx.py")[:-1])  # back to the snapshot's bytes
        assert edited != pristine and runs._cache_key(ws, tests) == pristine
        (ws.root / "src/toy/mathx.py").write_bytes(b"")  # a change no tool made is seen too
        assert runs._cache_key(ws, tests) != pristine
    finally:
        ws.close()


def test_the_digest_sees_a_change_that_keeps_size_and_mtime(snapshots: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """digest() reuses a file's hash while its stamps are unchanged: a same-size write with the old
    mtime put back (what a test process could do) still moves the ctime, so the bytes are read again."""
    monkeypatch.setattr(runs, "RACY_NS", 0)  # every file remembered at once
    ws = Workspace("toy", snapshots)
    try:
        pristine = ws.digest()
        assert ws._hashes, "the hashes are remembered"
        time.sleep(0.05)  # past the coarse clock's tick of the copy's ctimes (what RACY_NS ensures)
        target = ws.root / "src/toy/mathx.py"
        st, data = target.stat(), target.read_bytes()
        target.write_bytes(data.replace(b"def", b"fed", 1))
        os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
        assert target.stat().st_size == st.st_size and ws.digest() != pristine
        target.write_bytes(data)
        os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
        assert ws.digest() == pristine
    finally:
        ws.close()
