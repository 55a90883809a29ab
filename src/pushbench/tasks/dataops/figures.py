"""The DataOps-lite README's figures, rendered from the build (its manifest) into the README's
generated block ``backlogs`` (``pushbench.tasks.readme_blocks``): backlogs per N, their budgets,
units per type and the perfect reader's largest step count.
"""

from __future__ import annotations

from collections import Counter

from pushbench.tasks.base import TaskSpec

KINDS = ("csv_field", "metadata_repair", "consistency")


def backlogs_table(tasks: list[TaskSpec]) -> str:
    kinds = [k for k in KINDS if any(u["kind"] == k for t in tasks for u in t.settings["units"])]
    kinds += sorted({u["kind"] for t in tasks for u in t.settings["units"]} - set(kinds))
    lines = ["| N | backlogs | budget | " + " | ".join(f"`{k}` units" for k in kinds) + " | oracle steps (most) |",
             "| ---: | ---: | --- | " + " | ".join("---:" for _ in kinds) + " | ---: |"]
    for n in sorted({t.target for t in tasks}):
        group = [t for t in tasks if t.target == n]
        per = Counter(u["kind"] for t in group for u in t.settings["units"])
        budgets = "/".join(str(b) for b in sorted({t.budget for t in group}))
        lines.append(f"| {n} | {len(group)} | {budgets} | " + " | ".join(str(per[k]) for k in kinds)
                     + f" | {max(t.oracle_steps for t in group)} |")
    total = Counter(u["kind"] for t in tasks for u in t.settings["units"])
    lines.append(f"| **all** | **{len(tasks)}** | | " + " | ".join(f"**{total[k]}**" for k in kinds) + " | |")
    return "\n".join(lines)


def block(name: str, arg: str | None = None) -> str:
    from pushbench.tasks.readme_blocks import built_tasks

    return backlogs_table(built_tasks("dataops", name, arg, {"backlogs"}))
