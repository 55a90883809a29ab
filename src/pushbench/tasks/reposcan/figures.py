"""The RepoScan README's figures, rendered from the build (its manifest and the sizes of the
hidden valid sets) into the README's generated blocks (``pushbench.tasks.readme_blocks``).

Block ``tasks``: per repository, each predicate's argument and valid-set size, and the task count.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from pushbench import config
from pushbench.tasks.base import TaskSpec

HEADS = {"fixture": "`fixture` (test takes fixture)", "documented": "`documented` (non-test function with docstring)",
         "calls": "`calls` (test body calls prefix)"}


def valid_sizes(tasks: Iterable[TaskSpec], hidden_root: Path) -> dict[str, int]:
    """Each task's hidden valid-set size."""
    return {t.task_id: len(json.loads((hidden_root / "reposcan" / f"{t.task_id}.json").read_text(encoding="utf-8"))["valid"])
            for t in tasks}


def tasks_table(tasks: list[TaskSpec], sizes: dict[str, int]) -> str:
    repos = sorted({str(t.repo) for t in tasks})
    predicates = [p for p in HEADS if any(t.predicate == p for t in tasks)]
    predicates += sorted({str(t.predicate) for t in tasks} - set(predicates))
    cells: dict[tuple[str, str], set[str]] = {}
    for t in tasks:
        arg = t.settings.get("predicate_arg")
        cells.setdefault((str(t.repo), str(t.predicate)), set()).add(f"`{arg}`: {sizes[t.task_id]:,}" if arg else f"{sizes[t.task_id]:,}")
    per_repo = Counter(t.repo for t in tasks)
    lines = ["| repo | " + " | ".join(HEADS.get(p, f"`{p}`") for p in predicates) + " | tasks |",
             "| --- | " + " | ".join("---" for _ in predicates) + " | ---: |"]
    for repo in repos:
        row = [", ".join(sorted(cells.get((repo, p), {"–"}))) for p in predicates]
        lines.append(f"| {repo} | " + " | ".join(row) + f" | {per_repo[repo]} |")
    lines.append("| **all** | " + " | ".join("" for _ in predicates) + f" | **{len(tasks)}** |")
    return "\n".join(lines)


def block(name: str, arg: str | None = None) -> str:
    from pushbench.tasks.readme_blocks import built_tasks

    tasks = built_tasks("reposcan", name, arg, {"tasks"})
    return tasks_table(tasks, valid_sizes(tasks, config.HIDDEN))
