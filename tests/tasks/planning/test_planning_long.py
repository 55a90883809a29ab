"""The long-horizon split of planning (issue 30, ``tasks/planning/long.py``): its rows beside the
unchanged short ones, preferences stated only in the user profile, brief search lines and long
product pages, and memory sensitivity through the CLI — sim/perfect with an unlimited window solves
the long tasks that the same reader fails with the full transcript trimmed to an 8k-token window."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from pushbench import config
from pushbench.cli import app
from pushbench.tasks import get_family
from pushbench.tasks.base import task_split
from pushbench.tasks.planning.texts import POINTER
from pushbench.tokens import count_tokens
from pushbench.tools.base import ToolCall

SENSITIVITY = ("planning-long-01", "planning-long-02", "planning-long-03", "planning-long-04")


@pytest.fixture(scope="module")
def long_tasks(tasks: list[Any]) -> dict[str, Any]:
    found = {t.task_id: t for t in tasks if task_split(t) == "long"}
    if not found:
        pytest.skip("the planning manifest has no long split; run `pushbench manifests build --family planning`")
    return found


def hidden(task_id: str) -> dict[str, Any]:
    return json.loads((config.HIDDEN / "planning" / f"{task_id}.json").read_text())


def test_the_short_rows_are_those_of_a_build_without_the_long_split(tasks: list[Any]) -> None:
    params = {k: v for k, v in config.params("planning").items() if k != "long"}
    assert [b.spec for b in get_family("planning").build(params)] == [t for t in tasks if task_split(t) == "short"]


def test_long_rows_are_long_by_need_with_preferences_only_in_the_profile(long_tasks: dict[str, Any]) -> None:
    settings = config.params("planning")["long"]
    assert len(long_tasks) == settings["tasks"] and 24 <= len(long_tasks) <= 40
    assert statistics.median(t.oracle_steps for t in long_tasks.values()) >= 40
    for task in long_tasks.values():
        s = task.settings
        assert task.task_id.startswith("planning-long-") and s["kind"] == "shopping" and task.budget == 100
        assert 40 <= task.oracle_steps <= 0.6 * task.budget
        answer = hidden(task.task_id)
        profile = {p["id"]: p["text"] for p in s["profile"]}
        assert len(profile) >= 2 and sorted(r["id"] for r in answer["requirements"]) == sorted(
            r["id"] for r in s["requirements"])
        for rid, text in profile.items():
            assert f"- {rid}: {POINTER}" in task.objective and text not in task.objective  # only user_info says it
        env = get_family("planning").environment(task)
        shown = env.execute(ToolCall("user_info", {})).text
        assert all(f"- {rid}: {text}" in shown.splitlines() for rid, text in profile.items())
        assert env.action_origins("search", {"catalog": "products", "requirement": next(iter(profile))}) == (
            next(iter(profile)),)


def test_search_lists_products_briefly_and_their_pages_are_long(long_tasks: dict[str, Any]) -> None:
    task = long_tasks[SENSITIVITY[0]]
    env = get_family("planning").environment(task)
    page = env.execute(ToolCall("search", {"catalog": "products", "category": "mug"})).text.splitlines()
    assert page[0].startswith("search products: page 1 of ") and len(page) == 1 + task.settings["page_size"]
    assert all(ln.endswith("| stock and shipping on its page") and "ships from" not in ln for ln in page[1:])
    product = env.execute(ToolCall("details", {"item_id": page[1].split(" | ")[0]})).text
    assert " | stock " in product.splitlines()[0] and " | ships from " in product.splitlines()[0]
    assert count_tokens(product) >= 1_500


def run_cli(tmp_path: Path, model: str, ids: list[str]) -> list[dict[str, Any]]:
    out = tmp_path / model.replace("/", "-").replace("@", "-")
    result = CliRunner().invoke(app, ["run", "--family", "planning", "--split", "long", "--task", ",".join(ids),
                                      "--model", model, "--memory", "full", "--no-progress", "--out", str(out)])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in (out / "scored.jsonl").read_text().splitlines()]


def test_memory_sensitivity_through_the_cli(long_tasks: dict[str, Any], tmp_path: Path) -> None:
    """sim/perfect (unlimited window) solves these long tasks within 60% of the budget; with the
    full transcript trimmed to 8k tokens (its early results gone) the same reader fails most."""
    ids = [t for t in SENSITIVITY if t in long_tasks]
    unlimited = run_cli(tmp_path, "sim/perfect", ids)
    assert len(unlimited) == len(ids) and all(r["success"] and r["steps"] <= 60 for r in unlimited)
    trimmed = run_cli(tmp_path, "sim/perfect@8k", ids)
    assert sum(not r["success"] for r in trimmed) >= len(ids) / 2


def test_the_mind_reads_the_profile_first_and_takes_its_preferences(long_tasks: dict[str, Any]) -> None:
    """The objective names the profile's requirement ids only: sim/perfect looks them up first, then
    plans with them (the profile's lines are requirements where that result sits)."""
    from pushbench.policies.sim import SimLM
    from pushbench.tasks.planning.mind import REQ

    task = long_tasks[SENSITIVITY[0]]
    env = get_family("planning").environment(task)
    messages: list[dict[str, Any]] = [{"role": "user", "content": task.objective}]
    sim = SimLM("perfect")
    first = sim.act(messages, env.schemas(), 1)
    assert first.call is not None and first.call.name == "user_info"
    messages += [first.message, {"role": "tool", "tool_call_id": first.message["tool_calls"][0]["id"],
                                 "content": env.execute(ToolCall("user_info", {})).text}]
    second = sim.act(messages, env.schemas(), 1)
    assert second.call is not None and second.call.name != "user_info"
    mind = next(iter(sim._minds.values()))
    known = {mind.reader.facts.names[int(k)] for k, kind in zip(mind.reader.facts.array("key"),
                                                                mind.reader.facts.array("kind")) if kind == REQ}
    assert {p["id"] for p in task.settings["profile"]} <= known
