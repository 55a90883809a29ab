"""Planning episodes: a deterministic build, sim/perfect within the budget on a sample of tasks,
SimLM's actions independent of the hidden requirements, and no file opened by SimLM or the tools."""

from __future__ import annotations

import builtins
import io
import json
import os
import pathlib
from pathlib import Path
from typing import Any

import pytest

from pushbench.backends.native import run_native
from pushbench.policies.sim import SimLM
from pushbench.registry import CONTROLLERS, MEMORIES
from pushbench.scoring import score_events
from pushbench.tasks import get_family
from pushbench.tools.base import ToolCall

SMALL = {"budget": 100, "page_size": 8, "seed": 7, "world": {"products_per_category": 170},
         "shopping": {"levels": {1: 2, 2: 2, 3: 2}, "requirements": {1: [2, 3], 2: [4, 6], 3: [6, 8]}},
         "travel": {"days": {1: 1, 2: 1, 3: 1, 4: 1}, "requirements": {1: [2, 3], 2: [3, 5], 3: [3, 6], 4: [4, 8]}}}


def play(task: Any, profile: str = "perfect", memory: str = "full", env: Any = None) -> tuple[Any, Any]:
    env = env or get_family("planning").environment(task)
    result = run_native(env, SimLM(profile), CONTROLLERS.make("standard"), MEMORIES.make(memory), 1)
    return env, result


def test_building_twice_gives_identical_bytes() -> None:
    from pushbench.tasks.planning.world import build_world

    family = get_family("planning")
    built = family.build(SMALL)
    first = [t.spec.model_dump_json() + json.dumps(t.hidden, sort_keys=True) for t in built]
    build_world.cache_clear()  # the world too is generated again
    second = [t.spec.model_dump_json() + json.dumps(t.hidden, sort_keys=True) for t in family.build(SMALL)]
    assert first == second and len(first) == 10
    other = family.build({**SMALL, "seed": 8})  # another seed: another world and other tasks
    assert other[0].spec.settings["world_digest"] != built[0].spec.settings["world_digest"]
    assert [t.spec.objective for t in other] != [t.spec.objective for t in built]


@pytest.mark.parametrize("memory", ["full", "acg"])
def test_perfect_solves_every_task_within_the_budget(tasks: list, memory: str) -> None:
    sample = tasks if memory == "full" else tasks[::10]  # every task under full (about 5 s), a sample under ACG
    for task in sample:
        env, _ = play(task, memory=memory)
        m = score_events(env.verifier.events, task)
        assert m["success"] and m["steps"] <= 100 and m["invalid_actions"] == 0, (task.task_id, m["verdict_reason"])


def test_actions_do_not_depend_on_the_hidden_requirements(tasks: list) -> None:
    task = next(t for t in tasks if t.settings["kind"] == "shopping" and t.settings["level"] == 3)
    env_a, run_a = play(task, "base")
    env_b = get_family("planning").environment(task)
    env_b._requirements = env_b._requirements[:1]  # the verifier would judge far fewer requirements
    env_b, run_b = play(task, "base", env=env_b)
    calls = lambda run: [m["tool_calls"] for m in run.transcript if m["role"] == "assistant"]  # noqa: E731
    assert calls(run_a) == calls(run_b)


def test_simlm_and_the_tools_never_open_a_file(tasks: list, monkeypatch: pytest.MonkeyPatch) -> None:
    task = next(t for t in tasks if t.settings["kind"] == "travel" and t.settings["days"] == 3)
    env = get_family("planning").environment(task)  # the verifier loads its answers here, before the guard
    SimLM("perfect").act([{"role": "user", "content": "warm up"}], env.schemas(), 1)
    opened: list[str] = []

    def guard(original: Any) -> Any:
        def wrapper(target: Any, *args: Any, **kwargs: Any) -> Any:
            opened.append(str(target))
            raise AssertionError(f"opened {target}")
        return wrapper

    for module, name in ((builtins, "open"), (io, "open"), (os, "open")):
        monkeypatch.setattr(module, name, guard(getattr(module, name)))
    for name in ("open", "read_text", "read_bytes"):
        monkeypatch.setattr(pathlib.Path, name, guard(getattr(pathlib.Path, name)))
    env, _ = play(task, env=env)
    env.execute(ToolCall("check", {}))
    monkeypatch.undo()  # scoring reads params.yaml (the diagnostics' rule): outside the agent's reach
    assert opened == [] and score_events(env.verifier.events, task)["success"]


def test_weak_profiles_fail_some_and_name_the_failed_requirements(tasks: list) -> None:
    rows = []
    for task in tasks[1::30]:
        env, _ = play(task, "mini")
        rows.append(score_events(env.verifier.events, task))
    assert any(not r["success"] for r in rows)
    for r in rows:
        assert set(r["requirement_verdicts"]) and 0 <= r["requirement_pass_rate"] <= 1
        assert r["success"] == (r["verdict_reason"] == "all requirements met")


def test_cli_runs_a_small_grid_and_shows_a_task(tmp_path: Path, tasks: list) -> None:
    from typer.testing import CliRunner

    from pushbench.cli import app

    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["run", "--family", "planning", "--model", "sim/perfect,sim/mini",
                                      "--memory", "full,acg", "--limit", "2", "--seeds", "1",
                                      "--no-progress", "--out", str(out)])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (out / "scored.jsonl").read_text().splitlines()]
    assert len(rows) == 8 and all(r["tool_failures"] == 0 for r in rows)
    assert all(r["success"] for r in rows if r["model"] == "sim/perfect")
    assert all(set(r["requirement_verdicts"]) for r in rows)
    shown = CliRunner().invoke(app, ["show-task", rows[0]["task_id"]])
    assert shown.exit_code == 0 and "req:1" in shown.output
    tried = CliRunner().invoke(app, ["tools", "try", "--task", rows[0]["task_id"], "--call", 'details {"item_id": "P0001"}'])
    assert tried.exit_code == 0 and tried.output.startswith("P0001 | ")
