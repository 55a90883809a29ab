"""The planning README's figures, rendered from the build (the manifest, and the world its tasks
record) into the README's generated blocks (``pushbench.tasks.readme_blocks``).

Blocks: ``world`` (what the generated world holds), ``tasks`` (tasks and requirement counts per
kind and level, short split) and ``long`` (the long split: its sizes and sim/perfect's path).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from pushbench.tasks.base import TaskSpec, task_split

UNITS = {"shopping": ("product", "products"), "travel": ("day", "days")}


def world_table(world: Any) -> str:
    products = list(world.products.values())
    venues = list(world.venues.values())
    rows = [("products", f"{len(products):,}"), ("product categories", f"{len({p.category for p in products}):,}"),
            ("products out of stock", f"{sum(p.stock == 0 for p in products):,}"),
            ("coupons", f"{len(world.coupons):,}"), ("user profiles", f"{len(world.users):,}"),
            ("travel cities", f"{len(world.travel_cities()):,}"), ("days with dated transport", f"{world.params.days:,}"),
            ("flights and trains", f"{len(world.transports):,}"), ("hotels", f"{len(world.hotels):,}"),
            ("restaurants", f"{sum(v.kind == 'restaurant' for v in venues):,}"),
            ("attractions", f"{sum(v.kind == 'attraction' for v in venues):,}")]
    return "\n".join(["| the world holds | count |", "| --- | ---: |", *(f"| {a} | {b} |" for a, b in rows)])


def tasks_table(tasks: list[TaskSpec]) -> str:
    groups: dict[tuple[str, int], list[TaskSpec]] = defaultdict(list)
    for t in tasks:
        if task_split(t) == "short":
            groups[(t.settings["kind"], int(t.settings["level"]))].append(t)
    lines = ["| kind | level | tasks | requirements | requirement kinds |", "| --- | --- | ---: | --- | --- |"]
    for (kind, level), group in sorted(groups.items(), key=lambda g: (list(UNITS).index(g[0][0]) if g[0][0] in UNITS
                                                                      else len(UNITS), g[0])):
        one, many = UNITS.get(kind, ("", ""))
        counts = [int(t.settings["n_requirements"]) for t in group]
        spread = f"{min(counts)}" if min(counts) == max(counts) else f"{min(counts)}–{max(counts)}"
        kinds = sorted({k for t in group for k in t.settings["requirement_kinds"]})
        lines.append(f"| {kind} | {level} {one if level == 1 else many} | {len(group)} | {spread} | {', '.join(kinds)} |")
    lines.append(f"| **all** | | **{sum(map(len, groups.values()))}** | | |")
    return "\n".join(lines)


def _spread(values: list[int]) -> str:
    return f"{min(values)}" if min(values) == max(values) else f"{min(values)}–{max(values)}"


def long_table(tasks: list[TaskSpec]) -> str:
    """The long split: tasks, products per cart, requirements (of them in the profile), page size, the
    mid-episode price change (``changes.py``) and sim/perfect's actions (checked at build time)."""
    long = [t for t in tasks if task_split(t) == "long"]
    if not long:
        return "(no long split in this build)"
    steps = sorted(t.oracle_steps for t in long)
    rows = [("long tasks", f"{len(long)}"), ("products per cart", _spread([int(t.settings["level"]) for t in long])),
            ("requirements per task", _spread([int(t.settings["n_requirements"]) for t in long])),
            ("of them stated only in the profile", _spread([len(t.settings["profile"]) for t in long])),
            ("profile requirement kinds", ", ".join(sorted({k for t in long for k in t.settings["requirement_kinds"]
                                                             if k in ("delivery", "exclude_brand", "exclude_origin")}))),
            ("search hits per page", _spread([int(t.settings["page_size"]) for t in long])),
            ("a price rises after the agent's add number", _spread([int(t.settings["change"]["after_adds"]) for t in long])),
            ("by (percent of the old price)", _spread([round(100 * (t.settings["change"]["to"] / t.settings["change"]["from"] - 1))
                                                      for t in long])),
            ("sim/perfect's actions (median, range)", f"{steps[len(steps) // 2]} ({_spread(steps)})")]
    return "\n".join(["| the long split | value |", "| --- | ---: |", *(f"| {a} | {b} |" for a, b in rows)])


def block(name: str, arg: str | None = None) -> str:
    from pushbench.tasks.planning.world import WorldParams, build_world
    from pushbench.tasks.readme_blocks import built_tasks

    tasks = built_tasks("planning", name, arg, {"world", "tasks", "long"})
    if name == "tasks":
        return tasks_table(tasks)
    if name == "long":
        return long_table(tasks)
    return world_table(build_world(WorldParams(**tasks[0].settings["world"])))
