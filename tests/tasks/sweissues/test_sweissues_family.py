"""Structured SWE issues on the real snapshots: the build's checks, the verifier, SimLM on an issue.

Real jailed test runs, each test with its own fresh test cache (so nothing is looked up from an
earlier session)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pushbench.backends.native import run_native
from pushbench.controllers import make_controller
from pushbench.memory import make_memory
from pushbench.policies.sim import SimLM
from pushbench.scoring import score_events
from pushbench.tasks import get_family, load_tasks, manifest_path
from pushbench.runner.grid import task_split
from pushbench.tasks.swe.units import load_catalogue
from pushbench.tasks.sweissues.issues import check_group, groups_of
from pushbench.tools.base import ToolCall

def _call(env, name: str, args: dict) -> object:
    return env.execute(ToolCall(name, json.dumps(args)))


TWO_HUNKS = "sweissues-requests-h2-04"  # src/requests/models.py, two catalogue units


@pytest.fixture
def fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PUSHBENCH_SWE_TEST_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def issues() -> dict[str, object]:
    if not manifest_path("sweissues").is_file():
        pytest.skip("no sweissues manifest; run `pushbench manifests build --family sweissues`")
    return {t.task_id: t for t in load_tasks("sweissues")}


def test_the_manifest_records_structure_and_keeps_the_tests_hidden(issues) -> None:
    tasks = [t for t in issues.values() if task_split(t) == "short"]
    assert len(tasks) >= 60 and {t.settings["n_hunks"] for t in tasks} == {1, 2, 3}
    for task in tasks:
        s = task.settings
        assert s["repository"] == task.repo and s["file"].endswith(".py") and len(s["hunks"]) == s["n_hunks"]
        assert task.budget == 100 and task.target == 1 and "status" not in task.tools
        assert task.oracle_steps <= 0.6 * task.budget
        hidden = json.loads((Path("data/hidden/sweissues") / f"{task.task_id}.json").read_text())
        assert {f["path"] for f in hidden["faults"]} == {s["file"]} and len(hidden["faults"]) == s["n_hunks"]
        shown = task.objective + s["units"][0]["title"]
        assert not any(f["original"].strip() in shown for f in hidden["faults"])  # never the fix


def test_reference_passes_and_every_partial_repair_fails(snapshot_root: Path, fresh_cache: Path) -> None:
    units = [u for u in load_catalogue() if u.path == "src/requests/models.py"]
    (group,) = groups_of(units, 2)[("requests", "src/requests/models.py")]
    check = check_group(group, snapshot_root)
    assert len(check.runs) == 4 and check.runs[check.full].passed
    assert [s for s, run in check.runs.items() if run.passed] == [check.full]
    assert not check.problems(max_rank=3) and len(check.path) == 2


def test_a_partial_repair_is_rejected_and_the_whole_repair_accepted(issues, snapshot_root: Path,
                                                                     fresh_cache: Path) -> None:
    task = issues[TWO_HUNKS]
    env = get_family("sweissues").environment(task)
    hidden = json.loads((Path("data/hidden/sweissues") / f"{task.task_id}.json").read_text())
    first, second = hidden["faults"]
    try:
        assert "status" not in env.tools and [r.id for r in env.requirements()] == ["hunk:1", "hunk:2"]
        assert env.action_origins("run_tests", {"unit": "I01"}) == ("hunk:1", "hunk:2")
        assert env.action_origins("search_files", {"query": "def x("}) == ()
        for fault in (first, second):
            text = env.workspace.read(fault["path"])
            assert fault["broken"] in text
            obs = _call(env, "edit", {"path": fault["path"], "old": fault["broken"] + "\n",
                                      "new": fault["original"] + "\n", "unit": "I01"})
            assert obs.text.startswith("edit: ")
            verdict = _call(env, "submit", {"unit": "I01"}).text
            if fault is first:
                assert verdict.startswith("submit I01: rejected") and "the issue's tests fail" in verdict
        assert verdict == "submit I01: accepted (checker passed)."
    finally:
        env.end("test")


def test_the_perfect_profile_resolves_a_two_hunk_issue(issues, fresh_cache: Path) -> None:
    task = issues[TWO_HUNKS]
    env = get_family("sweissues").environment(task)
    run_native(env, SimLM("perfect"), make_controller("standard"), make_memory("full"), seed=3)
    metrics = score_events(env.verifier.events, task)
    assert metrics["success"] and metrics["termination"] == "final" and metrics["invalid_actions"] == 0
    assert metrics["n_hunks"] == 2 and metrics["steps"] <= task.budget
