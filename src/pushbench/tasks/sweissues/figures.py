"""The SWE-issues README's figures, rendered from the build (its manifest) into the README's
generated block ``issues`` (``pushbench.tasks.readme_blocks``): short-split issues per repository
and number of hunks, and long-split backlogs per repository.
"""

from __future__ import annotations

from collections import Counter

from pushbench.tasks.base import TaskSpec, task_split


def issues_table(tasks: list[TaskSpec]) -> str:
    short = [t for t in tasks if task_split(t) == "short"]
    long = Counter(str(t.repo) for t in tasks if task_split(t) == "long")
    per = Counter((str(t.repo), int(t.settings["n_hunks"])) for t in short)
    hunks = sorted({h for _, h in per})
    repos = sorted({str(t.repo) for t in tasks})
    lines = ["| repository | " + " | ".join(f"{h} hunk{'s' if h > 1 else ''}" for h in hunks)
             + " | issues | long backlogs |", "| --- | " + " | ".join("---:" for _ in hunks) + " | ---: | ---: |"]
    for repo in repos:
        lines.append(f"| {repo} | " + " | ".join(str(per[(repo, h)]) for h in hunks)
                     + f" | {sum(per[(repo, h)] for h in hunks)} | {long[repo]} |")
    lines.append("| **all** | " + " | ".join(f"**{sum(per[(r, h)] for r in repos)}**" for h in hunks)
                 + f" | **{len(short)}** | **{sum(long.values())}** |")
    return "\n".join(lines)


def block(name: str, arg: str | None = None) -> str:
    from pushbench.tasks.readme_blocks import built_tasks

    return issues_table(built_tasks("sweissues", name, arg, {"issues"}))
