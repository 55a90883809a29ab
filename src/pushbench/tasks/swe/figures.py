"""The SWE-lite README's figures, rendered from the build (the manifest and its hidden units) and
the mined catalogue (``catalogue.json``) into the README's generated blocks
(``pushbench.tasks.readme_blocks``).

Blocks: ``units`` (backlogs and units per repository) and ``faults`` (fault kinds in the catalogue
and among the units used).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from pushbench import config
from pushbench.tasks.base import TaskSpec


def hidden_units(tasks: list[TaskSpec], hidden_root: Path) -> dict[str, dict[str, Any]]:
    """Every unit the backlogs use, by unit id (``flask-04``), from their hidden files."""
    units: dict[str, dict[str, Any]] = {}
    for t in tasks:
        hidden = json.loads((hidden_root / "swe" / f"{t.task_id}.json").read_text(encoding="utf-8"))
        units.update({u["unit"]: u for u in hidden["units"].values()})
    return units


def units_table(tasks: list[TaskSpec], units: dict[str, dict[str, Any]]) -> str:
    repos = sorted({str(t.repo) for t in tasks})
    lines = ["| repository | backlogs | N per backlog | units |", "| --- | ---: | --- | ---: |"]
    for repo in repos:
        mine = [t for t in tasks if t.repo == repo]
        sizes = ", ".join(str(t.target) for t in sorted(mine, key=lambda t: (t.target, t.task_id)))
        lines.append(f"| {repo} | {len(mine)} | {sizes} | {sum(u['repo'] == repo for u in units.values())} |")
    lines.append(f"| **all** | **{len(tasks)}** | | **{len(units)}** |")
    return "\n".join(lines)


def faults_table(catalogue: list[dict[str, Any]], units: dict[str, dict[str, Any]]) -> str:
    mined, used = Counter(u["op"] for u in catalogue), Counter(u["op"] for u in units.values())
    lines = ["| fault kind | in the catalogue | in the backlogs |", "| --- | ---: | ---: |"]
    for op, n in sorted(mined.items(), key=lambda kv: (-kv[1], kv[0])):
        lines.append(f"| `{op}` | {n} | {used[op]} |")
    lines.append(f"| **all** | **{len(catalogue)}** | **{len(units)}** |")
    return "\n".join(lines)


def block(name: str, arg: str | None = None) -> str:
    from pushbench.tasks.readme_blocks import built_tasks
    from pushbench.tasks.swe.units import CATALOGUE

    tasks = built_tasks("swe", name, arg, {"units", "faults"})
    units = hidden_units(tasks, config.HIDDEN)
    if name == "units":
        return units_table(tasks, units)
    return faults_table(json.loads(CATALOGUE.read_text(encoding="utf-8")), units)
