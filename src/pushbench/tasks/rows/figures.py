"""The rows README's figures, rendered from the build (its manifest and hidden valid sets) into
the README's generated block ``conditions`` (``pushbench.tasks.readme_blocks``): per condition,
its tasks, the valid rows against the data set's rows, and the first page holding a valid row.
"""

from __future__ import annotations

import json
from pathlib import Path

from pushbench import config
from pushbench.tasks.base import TaskSpec
from pushbench.tasks.rows.data import load_rows


def conditions_table(tasks: list[TaskSpec], hidden_root: Path) -> str:
    lines = ["| condition | tasks (N) | valid rows | rows | first valid row on page |", "| --- | --- | ---: | ---: | ---: |"]
    groups: dict[tuple[str, str, str, float], list[TaskSpec]] = {}
    for t in tasks:
        s = t.settings
        groups.setdefault((s["dataset"], s["column"], s["op"], float(s["value"])), []).append(t)
    for (dataset, column, op, value), group in groups.items():
        valid = json.loads((hidden_root / "rows" / f"{group[0].task_id}.json").read_text(encoding="utf-8"))["valid"]
        first = min(int(v[1:]) for v in valid) // int(group[0].settings["page_rows"]) + 1
        targets = ", ".join(str(t.target) for t in sorted(group, key=lambda t: t.target))
        lines.append(f"| `{dataset}`, `{column}` {op} {value:g} | {len(group)} ({targets}) | {len(valid)} | "
                     f"{len(load_rows(dataset))} | {first} |")
    lines.append(f"| **all** | **{len(tasks)}** | | | |")
    return "\n".join(lines)


def block(name: str, arg: str | None = None) -> str:
    from pushbench.tasks.readme_blocks import built_tasks

    return conditions_table(built_tasks("rows", name, arg, {"conditions"}), config.HIDDEN)
