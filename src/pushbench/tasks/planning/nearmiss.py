"""Near misses: for each requirement of a task, a one-change variant of the generating plan that
breaks that requirement and no other (commonsense intact). A requirement without one would hold
for free, so the generators keep only requirements that have one.
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from typing import Any

from pushbench.tasks.planning import rules
from pushbench.tasks.planning.world import World


def failure_sets(world: World, settings: dict[str, Any], pool: list[dict[str, Any]],
                 variants: list[dict[str, Any]]) -> list[tuple[frozenset[str], dict[str, Any]]]:
    """Each variant that keeps every commonsense rule, with the pool requirements it fails."""
    out = []
    for variant in variants:
        verdict = rules.judge(world, settings, pool, variant)
        if verdict["delivered"] and all(verdict["commonsense"].values()):
            failed = frozenset(k for k, ok in verdict["requirements"].items() if not ok)
            if failed:
                out.append((failed, variant))
    return out


def choose(pool: list[dict[str, Any]], wanted: int, failures: list[tuple[frozenset[str], dict[str, Any]]],
           keep: AbstractSet[str] = frozenset()) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """Requirements taken in pool order (``keep`` ids always) such that each has a variant failing it
    alone among those taken; with that near miss per requirement id."""
    chosen: list[dict[str, Any]] = [r for r in pool if r["id"] in keep]
    for r in pool:
        if len(chosen) >= wanted:
            break
        if r["id"] in keep:
            continue
        trial = {x["id"] for x in chosen} | {r["id"]}
        if all(any(f & trial == {rid} for f, _ in failures) for rid in trial):
            chosen.append(r)
    ids = {x["id"] for x in chosen}
    near = {}
    for rid in sorted(ids):
        near[rid] = next((v for f, v in failures if f & ids == {rid}), None)
    return [r for r in pool if r["id"] in ids], {k: v for k, v in near.items() if v is not None}
