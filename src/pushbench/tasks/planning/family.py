"""Constrained planning (a DeepPlanning analogue): fill a shopping cart or plan a 1-4 day trip so
that every stated requirement (with an id) and the commonsense rules hold, over a world generated
from the params seed (``world.py``), then submit once.

The world is agent-visible and rebuilt from the settings every task records (its params and a
digest the environment checks), so the tools never open a file. Hidden (``data/hidden/planning/``,
the verifier's only): each task's structured requirements, the plan it was generated from and the
near misses that break one requirement each.
"""

from __future__ import annotations

import importlib
import random
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import Any

from pushbench import config
from pushbench.tasks.base import BuiltTask, TaskSpec
from pushbench.verifier import Verifier, load_hidden

TOOLS = ["add", "apply_coupon", "check", "coupons", "details", "remove", "remove_coupon", "route", "search",
         "submit", "user_info"]
SHOP_OBJECTIVE = (
    "Shopping for user {user}: fill the cart so that every requirement below holds, then call submit "
    "once (it ends the episode and the cart is judged as it is).\nRequirements:\n{reqs}\n"
    "Commonsense rules also count: every product in stock, one product per item asked for, every applied "
    "coupon applicable (minimum spend on its category, a non-stackable coupon alone). Delivery takes one day "
    "to dispatch plus the route days from where a product ships to where the user lives (user_info). "
    "Use search (catalog products; filters category, brand, colour, size, min_price, max_price, min_rating; "
    "sort; pages), details, user_info, coupons, route, add, remove, apply_coupon, remove_coupon and check. "
    "You have {budget} actions.")
TRAVEL_OBJECTIVE = (
    "Plan a {days}-day trip from {home} to {city}, {first} to {last}, for one traveller, so that every "
    "requirement below holds, then call submit once (it ends the episode and the plan is judged as it is).\n"
    "Requirements:\n{reqs}\n"
    "Commonsense rules also count: one transport from {home} to {city} on day 1 and one back on day {days}, "
    "a hotel with a free room for every night{nights}, every meal (60 minutes) and visit inside opening hours, "
    "no overlaps, route minutes between districts respected, and {transfer} minutes between a station and "
    "the first or last activity. Costs: transport, hotel nights and each meal or ticket. Use search (catalogs "
    "flights, trains, hotels, restaurants, attractions), details, route, add (day, start HH:MM), remove and "
    "check. You have {budget} actions.")


def objective(settings: dict[str, Any], budget: int) -> str:
    from pushbench.tasks.planning.rules import TRANSFER

    reqs = "\n".join(f"- {r['id']}: {r['text']}" for r in settings["requirements"])
    if settings["kind"] == "shopping":
        return SHOP_OBJECTIVE.format(user=settings["user"], reqs=reqs, budget=budget)
    days = settings["days"]
    return TRAVEL_OBJECTIVE.format(days=days, home=settings["home"], city=settings["city"], first=settings["dates"][0],
                                   last=settings["dates"][-1], reqs=reqs, budget=budget, transfer=TRANSFER,
                                   nights={1: " (none: a day trip)", 2: " (the night of day 1)"}.get(days, f" (days 1-{days - 1})"))


def _draw(world: Any, params: dict[str, Any], seed: int) -> list[tuple[str, dict[str, Any]]]:
    from pushbench.tasks.planning import shopping, travel

    made: list[tuple[str, dict[str, Any]]] = []
    for level, count in sorted(params["shopping"]["levels"].items()):
        rng = random.Random(f"planning-shop-{seed}-{level}")
        lo, hi = params["shopping"]["requirements"][level]
        n = 0
        while n < count:
            task = shopping.make_task(world, rng, int(level), (int(lo), int(hi)))
            if task is not None:
                n += 1
                made.append((f"shop-l{level}", task))
    for days, count in sorted(params["travel"]["days"].items()):
        rng = random.Random(f"planning-travel-{seed}-{days}")
        n = 0
        while n < count:
            lo, hi = params["travel"]["requirements"][days]
            task = travel.make_task(world, rng, int(days), (int(lo), int(hi)))
            if task is not None:
                n += 1
                made.append((f"trip-d{days}", task))
    return interleave(made)


def interleave(made: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]]:
    """Task ids numbered in turns over (kind, level) groups, so any prefix of the manifest (an
    experiment's ``limit``) mixes shopping and travel at every level."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for group, task in made:
        groups.setdefault(group, []).append(task)
    order = sorted(groups)
    out: list[Any] = []
    for rank in range(max(map(len, groups.values()), default=0)):
        for group in order:
            if rank < len(groups[group]):
                out.append((f"planning-{len(out) + 1:03d}-{group}", groups[group][rank]))
    return out


class PlanningFamily:
    name = "planning"

    def build(self, params: dict[str, Any], snapshot_root: Path | None = None) -> list[BuiltTask]:
        from pushbench.tasks.planning.texts import requirement_text
        from pushbench.tasks.planning.world import build_world, world_params

        seed = int(params.get("seed", config.params("seed")))
        wp = world_params(params, seed)
        world = build_world(wp)
        budget = int(params["budget"])
        out = []
        for task_id, task in _draw(world, params, seed):
            reqs = [{**r, "text": requirement_text(r)} for r in task["requirements"]]
            kinds = [r["kind"] for r in reqs]
            settings = {**task["settings"], "world": asdict(wp), "world_digest": world.digest(),
                        "page_size": int(params["page_size"]), "n_requirements": len(reqs),
                        "requirement_kinds": kinds,
                        "requirements": [{"id": r["id"], "kind": r["kind"], "text": r["text"]} for r in reqs]}
            spec = TaskSpec(task_id=task_id, family="planning", objective=objective(settings, budget), target=1,
                            budget=budget, tools=TOOLS, oracle_steps=_oracle_steps(task), settings=settings,
                            predicate="+".join(sorted(set(kinds))))
            hidden = {"task_id": task_id, "requirements": reqs, "plan": task["plan"],
                      "near_misses": task["near_misses"]}
            out.append(BuiltTask(spec=spec, hidden=hidden))
        if "long" in params:  # the long-horizon split (long.py), after the short tasks it leaves unchanged
            from pushbench.tasks.planning import long

            out += long.build(world, wp, params, seed, TOOLS)
        return out

    def episode_metrics(self, events: list[dict[str, Any]], task: TaskSpec) -> dict[str, Any]:
        """The verifier's per-requirement verdicts of the submitted deliverable, and the task's structure."""
        submit = next((e for e in events if e["kind"] == "call" and e["tool"] == "submit" and e["ok"]), None)
        verdict = ((submit or {}).get("info") or {}).get("verdict")
        ids = [r["id"] for r in task.settings["requirements"]]
        kinds = {r["id"]: r["kind"] for r in task.settings["requirements"]}
        passed = verdict["requirements"] if verdict else {rid: False for rid in ids}
        failed_sense = sorted(k for k, ok in (verdict or {}).get("commonsense", {}).items() if not ok)
        by_kind: dict[str, list[bool]] = {}
        for rid in ids:
            by_kind.setdefault(kinds[rid], []).append(bool(passed.get(rid)))
        calls = [e for e in events if e["kind"] == "call"]
        return {"planning_kind": task.settings["kind"], "level": task.settings["level"],
                "n_requirements": len(ids), "requirement_kinds": "+".join(sorted(set(kinds.values()))),
                "delivered": bool(verdict and verdict["delivered"]),
                "verdict_reason": verdict["reason"] if verdict else "no deliverable",
                "requirement_verdicts": {rid: bool(passed.get(rid)) for rid in ids},
                "requirements_passed": sum(bool(passed.get(rid)) for rid in ids),
                "requirement_pass_rate": round(sum(bool(passed.get(r)) for r in ids) / len(ids), 6),
                "kind_pass_rates": {k: round(sum(v) / len(v), 6) for k, v in sorted(by_kind.items())},
                "commonsense_failed": "+".join(failed_sense),
                "precondition_rejections": sum(1 for e in calls if (e.get("info") or {}).get("rejection")),
                "check_calls": sum(1 for e in calls if e["tool"] == "check" and e["ok"])}

    def warm(self, tasks: list[TaskSpec]) -> None:
        """Build the worlds of these tasks and their digests (the runner, before forking)."""
        from pushbench.tasks.planning.world import WorldParams, build_world

        importlib.import_module("pushbench.tasks.planning.env")  # the tools' imports, once
        for params in {WorldParams(**t.settings["world"]) for t in tasks}:
            build_world(params).digest()

    def environment(self, task: TaskSpec, snapshot_root: Path | None = None, hidden_root: Path | None = None,
                    sink: Any = None) -> Any:
        from pushbench.tasks.planning.env import PlanningEnv
        from pushbench.tasks.planning.world import WorldParams, build_world

        world = build_world(WorldParams(**task.settings["world"]))
        if world.digest() != task.settings["world_digest"]:
            raise RuntimeError(f"the planning world of {task.task_id} no longer matches its manifest; "
                               "rebuild the manifests (`pushbench manifests build --family planning`)")
        hidden = load_hidden("planning", task.task_id, hidden_root)
        verifier = Verifier(task.task_id, task.target, lambda item: False, sink=sink)
        return PlanningEnv(task, verifier, world, hidden["requirements"])


def _oracle_steps(task: dict[str, Any]) -> int:
    """A careful planner's actions: a search and an add per line, the coupons, a check and the submit."""
    plan = task["plan"]
    lines = len(plan.get("cart", {})) + len(plan.get("coupons", [])) + len(plan.get("lines", []))
    return 2 * lines + 3


def structure(tasks: list[TaskSpec]) -> Counter:
    """(kind, level, n requirements) counts, for the README and analyses."""
    return Counter((t.settings["kind"], t.settings["level"], t.settings["n_requirements"]) for t in tasks)
