"""The long-horizon split of sweissues on the real snapshots (issue 30): its manifest rows, the
environment of a backlog, a partial repair of one of its issues, and memory sensitivity — sim/perfect
with an unlimited window resolves long backlogs that the same reader fails with the full transcript
trimmed to an 8k-token window. Real jailed test runs (through the test cache)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pushbench.backends.native import run_native
from pushbench.controllers import make_controller
from pushbench.memory import make_memory
from pushbench.policies.sim import SimLM
from pushbench.runner.grid import task_split
from pushbench.scoring import score_events
from pushbench.tasks import get_family, load_tasks, manifest_path
from pushbench.tasks.sweissues.long import partition
from pushbench.tasks.swe.units import UnitFault, load_catalogue
from pushbench.tools.base import ToolCall

SENSITIVITY = ("sweissues-long-flask-01", "sweissues-long-pytest-01", "sweissues-long-requests-01")


@pytest.fixture(scope="module")
def long_tasks() -> dict[str, object]:
    if not manifest_path("sweissues").is_file():
        pytest.skip("no sweissues manifest; run `pushbench manifests build --family sweissues`")
    tasks = {t.task_id: t for t in load_tasks("sweissues") if task_split(t) == "long"}
    if not tasks:
        pytest.skip("the sweissues manifest has no long split")
    return tasks


def hidden(task_id: str) -> dict:
    return json.loads((Path("data/hidden/sweissues") / f"{task_id}.json").read_text())


def test_partitions_are_disjoint_and_each_issue_spans_files() -> None:
    import random

    units = [u for u in load_catalogue() if u.repo == "pytest"]
    issues = partition(units, [3, 3, 3, 2, 2, 2], random.Random(7))
    flat = [u.unit for issue in issues for u in issue]
    assert len(flat) == len(set(flat)) and len(issues) >= 5
    assert all(len({u.path for u in issue}) == len(issue) for issue in issues)


def test_long_rows_record_a_backlog_and_keep_answers_hidden(long_tasks) -> None:
    assert 24 <= len(long_tasks) <= 48
    for task in long_tasks.values():
        s = task.settings
        assert task.task_id.startswith("sweissues-long-") and s["split"] == "long"
        assert task.target == s["n_issues"] == len(s["units"]) and s["n_hunks"] == len(s["hunks"]) >= 8
        assert 40 <= task.oracle_steps <= 0.6 * task.budget and task.budget == 100 and "status" not in task.tools
        answer = hidden(task.task_id)
        assert sorted(answer["issues"]) == [u["id"] for u in s["units"]]
        for issue_id, issue in answer["issues"].items():
            paths = [f["path"] for f in issue["faults"]]
            assert len(paths) == len(set(paths)) >= 2  # an issue's hunks sit in different files
            title = next(u["title"] for u in s["units"] if u["id"] == issue_id)
            assert "::" not in title and not any(f["path"] in title for f in issue["faults"])  # symptoms, not places
            assert not any(f["original"].strip() in title + task.objective for f in issue["faults"])
            assert [h["issue"] for h in s["hunks"]].count(issue_id) == len(issue["faults"])


def test_a_backlog_environment_checks_each_issue_by_its_own_tests(long_tasks, snapshot_root: Path) -> None:
    task = long_tasks[SENSITIVITY[2]]
    env = get_family("sweissues").environment(task)
    answer = hidden(task.task_id)
    try:
        first = answer["issues"]["I01"]["faults"]
        assert env.action_origins("run_tests", {"unit": "I02"}) == tuple(
            h["id"] for h in task.settings["hunks"] if h["issue"] == "I02")
        lines = task.settings["read_lines"]
        described = next(s["function"]["description"] for s in env.schemas() if s["function"]["name"] == "read_file")
        assert f"at most {lines} lines per call" in described and "read page by page" in described
        page = env.execute(ToolCall("read_file", json.dumps({"path": first[0]["path"], "start": 1, "end": 2 * lines})))
        size = len(env.workspace.read(first[0]["path"]).split("\n"))
        assert page.text.split("\n", 1)[0] == f"{first[0]['path']} lines 1-{min(lines, size)} of {size}"
        for fault in first:
            text = env.workspace.read(fault["path"])
            old, new = UnitFault(**{**fault, "tests": tuple(fault["tests"])}).fix_strings(text)
            edited = env.execute(ToolCall("edit", json.dumps({"path": fault["path"], "old": old, "new": new,
                                                               "unit": "I01"}))).text
            assert edited.startswith("edit: ") and "the file around the change, lines " in edited
            verdict = env.execute(ToolCall("submit", json.dumps({"unit": "I01"}))).text
            if fault is not first[-1]:
                assert verdict.startswith("submit I01: rejected"), verdict  # a partial repair fails
            assert fault["broken"] in text
        assert verdict == "submit I01: accepted (checker passed)."
        assert env.execute(ToolCall("submit", json.dumps({"unit": "I02"}))).text.startswith("submit I02: rejected")
    finally:
        env.end("test")


def episode(task, model: str) -> dict:
    env = get_family("sweissues").environment(task)
    run_native(env, SimLM(model), make_controller("standard"), make_memory("full"), seed=0)
    return score_events(env.verifier.events, task)


def test_memory_sensitivity_perfect_unlimited_solves_perfect_at_8k_fails(long_tasks) -> None:
    """The first backlog of each repository: sim/perfect resolves every one within 60% of the budget;
    the same reader with the full transcript trimmed to 8k tokens fails most of them."""
    tasks = [long_tasks[t] for t in SENSITIVITY]
    unlimited = [episode(t, "perfect") for t in tasks]
    assert all(m["success"] and m["steps"] <= 0.6 * t.budget for m, t in zip(unlimited, tasks))
    trimmed = [episode(t, "perfect@8k") for t in tasks]
    assert sum(not m["success"] for m in trimmed) >= 2
