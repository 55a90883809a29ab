"""The perfect reader's path through a long backlog, estimated from the build's checks (no model).

Per issue it runs the tests once and submits once; per hunk it follows the first failure it is
shown (``issues.reader_path``): a search for each function the failure names before the faulty
one, and for the faulty one; each definition of a searched name that it opens (those the
traceback points at first, then in path order, at most three when the name is common) costs the
pages that hold the function (pages are aligned: lines 1-P, P+1-2P, ...) and, where it is not the
faulty one, up to three wrong tries (edit, run, revert); the faulty function costs its tries
until the right repair (``rank``). So the estimate counts name clashes across files and the
functions a traceback passes through, which the short issues' estimate leaves out. ``tried_path``
replays the tries at each faulty function with real runs (a wrong try changes the failure the
reader ranks from next) and drops an issue where a wrong repair would silence a symptom.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from pushbench import config
from pushbench.tasks.swe.faults import apply_edit, functions, parse_python, repair_candidates
from pushbench.tasks.swe.mind import MAX_DEFINITIONS, TRIES_PER_FUNCTION
from pushbench.tasks.swe.pool import open_workspace, release
from pushbench.tasks.swe.reader import is_test_path, numbered, rank_repairs, visible_repairs
from pushbench.tasks.swe.runs import run_tests
from pushbench.tasks.swe.units import inject
from pushbench.tasks.sweissues.issues import first_failure, union_tests

TRY = 3  # a wrong try: the edit, the run after it, the edit that reverts it


@lru_cache(maxsize=64)
def definitions(root: str, name: str) -> tuple[tuple[str, int, int, int], ...]:
    """(path, first line, last line, repair candidates) of every library ``def name(`` under ``root``."""
    pattern = re.compile(rf"^\s*(?:async\s+)?def\s+{re.escape(name)}\s*\(", re.M)
    out = []
    for path in sorted(Path(root).rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if not rel.startswith("src/") or is_test_path(rel):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if not pattern.search(text):
            continue
        lines = text.split("\n")
        for func in functions(parse_python(text)):
            if func.qualname.rsplit(".", 1)[-1] == name:
                out.append((rel, func.lineno, func.end_lineno, len(repair_candidates(func.node, lines))))
    return tuple(out)


def pages(first: int, last: int, page: int) -> int:
    return (last - 1) // page - (first - 1) // page + 1


def opened(name: str, framed: set[str], root: str) -> list[tuple[str, int, int, int]]:
    """The definitions of ``name`` the reader opens, in its order: framed files first."""
    found = list(definitions(root, name))
    if len(found) > MAX_DEFINITIONS:
        found = [d for d in found if d[0] in framed]
    return sorted(found, key=lambda d: (d[0] not in framed, d[0]))


def hunk_steps(hunk: Any, unit: Any, page: int, root: str) -> int:
    """Calls spent on one hunk: the suspects before it, then its own function."""
    steps = 0
    for name in hunk.before:
        framed = {p for p, f in hunk.frames if f == name}
        steps += 1 + sum(pages(a, b, page) + TRY * min(TRIES_PER_FUNCTION, n) for _, a, b, n in opened(name, framed, root))
    name = unit.function.rsplit(".", 1)[-1]
    framed = {p for p, f in hunk.frames if f == name}
    steps += 1
    for path, a, b, n in opened(name, framed, root):
        if path == unit.path:
            return steps + pages(a, b, page) + 2 * hunk.rank + (hunk.rank - 1)
        steps += pages(a, b, page) + TRY * min(TRIES_PER_FUNCTION, n)
    return steps + 1 + 2 * hunk.rank + (hunk.rank - 1)  # not found by name: as if read once


def backlog_steps(issues: Any, page: int, snapshot_root: Path | None = None) -> int:
    """Tool calls a perfect reader spends on a backlog: list and final, per issue a run and a
    submit, per hunk ``hunk_steps``."""
    steps = 2
    for issue in issues:
        root = str((snapshot_root or config.SNAPSHOT_SRC) / issue.group[0].repo)
        by_unit = {u.unit: u for u in issue.group}
        steps += 2 + sum(hunk_steps(h, by_unit[h.unit], page, root) for h in issue.path)
    return steps


def tried_path(check: Any, shown: int, snapshot_root: Path | None = None, cache: Any = "default") -> Any:
    """The check with each hunk's rank replaced by the tries the reader really spends on it, or None
    when it would keep a wrong repair or not reach the right one within its first tries.

    ``issues.reader_path`` ranks every repair from the first failure of the state before the hunk.
    The reader re-ranks after each wrong try, from the failure that try left (a different message
    can favour another kind of repair), and keeps a try after which fewer tests fail: so each wrong
    try ranked first is applied and run here (jailed, through the test cache), as the reader would."""
    from dataclasses import replace

    steps, repaired = [], frozenset[str]()
    ws = open_workspace(check.group[0].repo, snapshot_root)
    try:
        pristine = {u.path: ws.read(u.path) for u in check.group}
        for hunk in check.path:
            for path, text in pristine.items():
                ws.write(path, text)
            inject(ws, [u for u in check.group if u.unit not in repaired])
            n = _tries(ws, check, hunk, check.runs[repaired], shown, cache)
            if n is None:
                return None
            steps.append(replace(hunk, rank=n))
            repaired |= {hunk.unit}
    finally:
        release(ws)
    return replace(check, path=tuple(steps))


def _tries(ws: Any, check: Any, hunk: Any, run: Any, shown: int, cache: Any) -> int | None:
    unit = next(u for u in check.group if u.unit == hunk.unit)
    name, tests = unit.function.rsplit(".", 1)[-1], list(union_tests(check.group))
    text = ws.read(unit.path)
    evidence, failing, tried = first_failure(run.shown(shown)), _failing(run), set()
    for n in range(1, TRIES_PER_FUNCTION + 1):
        ranked = [r for r in rank_repairs(visible_repairs(numbered(text), name) or [], evidence, unit.path)
                  if (r.lineno, r.new) not in tried]
        if not ranked:
            return None
        repair = ranked[0]
        if repair.lineno == unit.lineno and repair.new == unit.original:
            return n
        tried.add((repair.lineno, repair.new))
        ws.write(unit.path, apply_edit(text, repair))
        after = run_tests(ws, tests, cache)
        ws.write(unit.path, text)
        if _failing(after) < failing:  # a wrong repair that silences a symptom: the reader keeps it
            return None
        evidence = first_failure(after.shown(shown))
    return None


def _failing(run: Any) -> frozenset[str]:
    return frozenset(t for t, v in run.outcomes.items() if v in ("FAILED", "ERROR"))
