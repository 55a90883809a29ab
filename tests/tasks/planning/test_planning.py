"""The planning family: generated plans pass, each near miss fails exactly its requirement, an empty
deliverable fails with 'no deliverable', tool error paths, and SimLM's mind reads messages only."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

from pushbench import config
from pushbench.tasks import get_family
from pushbench.tasks.base import task_split
from pushbench.tasks.planning import mind as planning_mind
from pushbench.tasks.planning import rules
from pushbench.tasks.planning.world import WorldParams, build_world
from pushbench.tools.base import ToolCall


def hidden(task_id: str) -> dict[str, Any]:
    return json.loads((config.HIDDEN / "planning" / f"{task_id}.json").read_text())


def test_counts_structure_and_world_size(tasks: list) -> None:
    tasks = [t for t in tasks if task_split(t) == "short"]  # the long split: test_planning_long.py
    shop = [t for t in tasks if t.settings["kind"] == "shopping"]
    trip = [t for t in tasks if t.settings["kind"] == "travel"]
    assert len(shop) >= 120 and len(trip) >= 120
    assert {t.settings["level"] for t in shop} == {1, 2, 3} and {t.settings["level"] for t in trip} == {1, 2, 3, 4}
    assert all(2 <= t.settings["n_requirements"] <= 8 for t in tasks)
    world = build_world(WorldParams(**tasks[0].settings["world"]))
    assert len(world.products) >= 2000 and world.digest() == tasks[0].settings["world_digest"]


def test_generating_plans_pass_and_near_misses_fail_exactly_their_requirement(tasks: list) -> None:
    world = build_world(WorldParams(**tasks[0].settings["world"]))
    for task in tasks:
        h = hidden(task.task_id)
        assert rules.judge(world, task.settings, h["requirements"], h["plan"])["success"], task.task_id
        assert sorted(h["near_misses"]) == sorted(r["id"] for r in h["requirements"])
        for rid, variant in h["near_misses"].items():
            verdict = rules.judge(world, task.settings, h["requirements"], variant)
            assert [k for k, ok in verdict["requirements"].items() if not ok] == [rid], (task.task_id, rid)
            assert all(verdict["commonsense"].values())


def test_empty_or_missing_deliverable_fails_with_no_deliverable(tasks: list) -> None:
    from pushbench.scoring import score_events

    fam = get_family("planning")
    env = fam.environment(tasks[0])
    obs = env.execute(ToolCall("submit", {}))
    m = score_events(env.verifier.events, tasks[0])
    assert obs.done and not m["success"] and m["verdict_reason"] == "no deliverable"
    env = fam.environment(tasks[0])
    for _ in range(env.task.budget):
        env.execute(ToolCall("user_info", {}))
    m = score_events(env.verifier.events, tasks[0])
    assert env.done and not m["success"] and m["verdict_reason"] == "no deliverable"


def test_tool_error_paths(tasks: list) -> None:
    fam = get_family("planning")
    shop = fam.environment(next(t for t in tasks if t.settings["kind"] == "shopping"))
    world = shop.world
    empty = next(p for p in world.products.values() if p.stock == 0)
    cases = [("search", {"catalog": "products", "cuisine": "thai"}, "ERROR:"),
             ("search", {"catalog": "nope"}, "ERROR:"), ("search", {"catalog": "products", "page": 999}, "ERROR:"),
             ("details", {"item_id": "X1"}, "ERROR:"), ("add", {"item_id": empty.id}, "REJECTED:"),
             ("add", {"item_id": "V001", "day": 1, "start": "10:00"}, "ERROR:"),
             ("remove", {"item_id": empty.id}, "REJECTED:"), ("apply_coupon", {"coupon_id": "C01"}, "REJECTED:"),
             ("apply_coupon", {"coupon_id": "Z9"}, "ERROR:"), ("remove_coupon", {"coupon_id": "C01"}, "REJECTED:"),
             ("route", {"origin": "Mars", "destination": "Lyon"}, "ERROR:"),
             ("check", {"requirement": "req:99"}, "ERROR:")]
    for name, args, prefix in cases:
        obs = shop.execute(ToolCall(name, args))
        assert obs.text.startswith(prefix) and not obs.ok, (name, args, obs.text)
    rejected = [e for e in shop.verifier.events if (e.get("info") or {}).get("rejection") == "precondition"]
    assert len(rejected) == sum(1 for c in cases if c[2] == "REJECTED:")
    trip = fam.environment(next(t for t in tasks if t.settings["kind"] == "travel" and t.settings["days"] > 1))
    for name, args, prefix in [("add", {"item_id": "P0001"}, "ERROR:"), ("add", {"item_id": "V001", "day": 9}, "ERROR:"),
                               ("add", {"item_id": "V001", "day": 1, "start": "25:00"}, "ERROR:"),
                               ("add", {"item_id": "V001", "day": 1, "start": "03:00"}, "REJECTED:"),
                               ("apply_coupon", {"coupon_id": "C01"}, "ERROR:")]:
        obs = trip.execute(ToolCall(name, args))
        assert obs.text.startswith(prefix), (name, args, obs.text)


def test_requirements_and_origins(tasks: list) -> None:
    env = get_family("planning").environment(tasks[0])
    ids = [r.id for r in env.requirements()]
    assert ids == [r["id"] for r in tasks[0].settings["requirements"]]
    assert env.action_origins("search", {"catalog": "products", "requirement": ids[0]}) == (ids[0],)
    assert env.action_origins("submit", {}) == tuple(ids)
    assert all("requirement" in s["function"]["parameters"]["properties"] for s in env.schemas())


def test_the_mind_imports_nothing_that_opens_answers() -> None:
    for module in (planning_mind, __import__("pushbench.tasks.planning.planner", fromlist=["x"])):
        tree = ast.parse(Path(module.__file__).read_text())
        names = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert not {n for n in names if n and ("verifier" in n or "world" in n or "family" in n or "rules" in n)}


def test_two_visits_at_one_time_fail_the_timeline_without_a_crash(tasks: list) -> None:
    task = next(t for t in tasks if t.settings["kind"] == "travel" and t.settings["days"] >= 2)
    env = get_family("planning").environment(task)
    h = hidden(task.task_id)
    for line in h["plan"]["lines"]:
        env.lines.append(dict(line))
    venue = next(ln for ln in h["plan"]["lines"] if ln["start"] is not None)
    other = next(v for v in env.world.venues.values() if v.city == task.settings["city"] and v.id != venue["item"]
                 and v.opens <= venue["start"] and venue["start"] + v.duration <= v.closes)
    env.lines.append({"day": venue["day"], "item": other.id, "start": venue["start"]})
    assert "activities overlap" in env.execute(ToolCall("check", {})).text
    env.execute(ToolCall("submit", {}))
    verdict = next(e for e in env.verifier.events if e.get("tool") == "submit")["info"]["verdict"]
    assert verdict["commonsense"]["timeline"] is False and not verdict["success"]


def test_trip_and_coupon_state_refusals(tasks: list) -> None:
    fam = get_family("planning")
    task = next(t for t in tasks if t.settings["kind"] == "travel" and t.settings["days"] >= 3)
    env, s = fam.environment(task), task.settings
    w = env.world
    wrong_day = next(t for t in w.transports.values() if t.date != s["dates"][0])
    busy = next(h for h in w.hotels.values() if s["dates"][0] not in h.free)
    free = next(h for h in w.hotels.values() if {s["dates"][0], s["dates"][1]} <= set(h.free))
    cases = [("add", {"item_id": wrong_day.id, "day": 1}, "REJECTED: " + wrong_day.id + " runs on"),
             ("add", {"item_id": busy.id, "day": 1}, "REJECTED: " + busy.id + " has no free room"),
             ("add", {"item_id": free.id, "day": s["days"]}, "REJECTED: day"),
             ("add", {"item_id": free.id, "day": 1}, "plan: added"),
             ("add", {"item_id": free.id, "day": 1}, "REJECTED: the night of day 1 already has a hotel"),
             ("remove", {"item_id": free.id, "day": 2}, "REJECTED: " + free.id + " is not in the plan"),
             ("remove", {"item_id": free.id, "day": 1}, "plan: removed")]
    for name, args, prefix in cases:
        assert env.execute(ToolCall(name, args)).text.startswith(prefix), (name, args)
    shop = fam.environment(next(t for t in tasks if t.settings["kind"] == "shopping"))
    product = next(p for p in shop.world.products.values() if p.stock >= 5 and p.price >= 5000)
    coupon = next(c for c in shop.world.coupons.values() if c.category in ("all", product.category)
                  and c.threshold <= product.price * 5)
    assert shop.execute(ToolCall("add", {"item_id": product.id, "quantity": 5})).ok
    assert shop.execute(ToolCall("apply_coupon", {"coupon_id": coupon.id})).text.startswith("cart: coupon")
    again = shop.execute(ToolCall("apply_coupon", {"coupon_id": coupon.id}))
    assert again.text == f"REJECTED: coupon {coupon.id} is already applied."
    assert "total" in shop.execute(ToolCall("check", {})).text
