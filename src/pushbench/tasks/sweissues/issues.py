"""Structured SWE issues: groups of 1-3 co-located SWE-lite faults, checked together.

A *group* is k catalogue units (``tasks/swe/catalogue.json``) whose faults sit in one file of one
repository; its issue is verified by the union of the units' targeted tests. ``check_group``
runs that union on every state of the file between "all k faults in" and "all repaired" (2^k
states, through the SWE-lite jail and its test cache): the reference repair (every hunk) must
pass and every partial repair (any proper subset of the hunks) must fail. It also walks the
perfect reader's path: from the first failure shown, the hunk the SWE-lite reader ranks best is
repaired, and so on; a group where the reader finds no hunk from what it sees is dropped. The
path is walked first: a group whose reader gets stuck is dropped whatever its other states give,
so they are not run.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from pushbench.tasks.swe.reader import Evidence, read_failure, suspects
from pushbench.tasks.swe.pool import open_workspace, release
from pushbench.tasks.swe.runs import SHOWN_CHARS, CheckRun, run_tests
from pushbench.tasks.swe.units import UnitFault, inject, reader_rank

MAX_SHOWN = 4  # failing tests quoted in an issue; the rest are counted
MAX_MESSAGE = 160


def groups_of(units: list[UnitFault], k: int) -> dict[tuple[str, str], list[tuple[UnitFault, ...]]]:
    """Every k-combination of units sharing (repo, path), per file, in catalogue order."""
    by_file: dict[tuple[str, str], list[UnitFault]] = {}
    for unit in units:
        by_file.setdefault((unit.repo, unit.path), []).append(unit)
    return {key: list(itertools.combinations(members, k)) for key, members in sorted(by_file.items())
            if len(members) >= k}


def candidates(units: list[UnitFault], k: int, seed: int) -> list[tuple[UnitFault, ...]]:
    """All k-groups, shuffled per file and interleaved round-robin over files (so the issues
    spread over files rather than filling up from the file with most units)."""
    per_file = groups_of(units, k)
    queues = []
    for key, groups in per_file.items():
        order = list(groups)
        random.Random(f"{seed}:sweissues:{k}:{key[0]}:{key[1]}").shuffle(order)
        queues.append(order)
    random.Random(f"{seed}:sweissues:{k}").shuffle(queues)
    out: list[tuple[UnitFault, ...]] = []
    for row in itertools.zip_longest(*queues):
        out.extend(g for g in row if g is not None)
    return out


def union_tests(group: tuple[UnitFault, ...]) -> tuple[str, ...]:
    return tuple(sorted({t for unit in group for t in unit.tests}))


def first_failure(output: str) -> Evidence:
    """The evidence a reader works from: every failing test, but the frames and messages of the
    first failure section only (one symptom at a time)."""
    full = read_failure(output)
    kept, section, seen = [], 0, False
    for line in output.splitlines():
        if line.startswith("___") and line.rstrip().endswith("___"):
            section += 1
        elif line.startswith("====="):  # an ERRORS section comes before FAILURES: only the first counts
            section = 0 if ("FAILURES" in line or "ERRORS" in line) and not seen else -1
        seen = seen or section == 1
        if section <= 1:
            kept.append(line)
    first = read_failure("\n".join(kept))
    return Evidence(full.failing, first.frames, first.errors)


@dataclass(frozen=True)
class HunkStep:
    unit: str  # the catalogue unit repaired at this step
    rank: int  # where the reader ranks its repair, from the first failure then shown
    before: tuple[str, ...] = ()  # suspects the reader looks at first (functions the failure names earlier)
    frames: tuple[tuple[str, str], ...] = ()  # (path, function) of the traceback frames it worked from


@dataclass(frozen=True)
class GroupCheck:
    group: tuple[UnitFault, ...]
    runs: dict[frozenset[str], CheckRun]  # repaired units -> the union's run on that state (all 2^k
    # states, or only the reader's path when it got stuck)
    path: tuple[HunkStep, ...]  # the perfect reader's repairs, in order (shorter: it got stuck)

    @property
    def full(self) -> frozenset[str]:
        return frozenset(u.unit for u in self.group)

    @property
    def broken(self) -> CheckRun:
        return self.runs[frozenset()]

    def problems(self, max_rank: int) -> list[str]:
        """Why this group makes no issue (empty: it does)."""
        if len(self.path) < len(self.group):  # its other states were not run
            return ["the reader finds no repair from the failure it sees"]
        out = []
        if not self.runs[self.full].passed:
            out.append("the reference repair fails its tests")
        out += [f"repairing only {sorted(s)} passes" for s, run in self.runs.items() if s != self.full and run.passed]
        if any(step.rank > max_rank for step in self.path):
            out.append(f"a repair ranks past {max_rank}")
        return out


def check_group(group: tuple[UnitFault, ...], snapshot_root: Path | None = None,
                cache: Any = "default", context: tuple[UnitFault, ...] = (), shown: int = SHOWN_CHARS) -> GroupCheck:
    """The union's run on each of the 2^k repair states, and the perfect reader's path (walked first;
    when the reader gets stuck, only the states it saw are run). The group's hunks may sit in several
    files; ``context`` faults (other issues of the same task) stay injected in every state, as they
    are when the agent starts; ``shown`` is how much of a run the agent sees."""
    tests = list(union_tests(group))
    states = [frozenset(repaired) for size in range(len(group) + 1)
              for repaired in itertools.combinations([u.unit for u in group], size)]
    paths = sorted({u.path for u in group})
    runs: dict[frozenset[str], tuple[CheckRun, dict[str, str]]] = {}
    ws = open_workspace(group[0].repo, snapshot_root)
    try:
        pristine = {path: ws.read(path) for path in sorted({u.path for u in (*group, *context)})}

        def visit(state: frozenset[str]) -> tuple[CheckRun, dict[str, str]]:
            """The union's run on ``state`` and the text of the group's files there."""
            if state not in runs:
                for path, text in pristine.items():
                    ws.write(path, text)
                inject(ws, [*context, *(u for u in group if u.unit not in state)])
                runs[state] = run_tests(ws, tests, cache), {path: ws.read(path) for path in paths}
            return runs[state]

        steps = reader_path(group, visit, shown)
        if len(steps) == len(group):
            for state in states:
                visit(state)
    finally:
        release(ws)
    return GroupCheck(group, {state: runs[state][0] for state in states if state in runs}, steps)


def reader_path(group: tuple[UnitFault, ...], visit: Callable[[frozenset[str]], tuple[CheckRun, dict[str, str]]],
                shown: int = SHOWN_CHARS) -> tuple[HunkStep, ...]:
    """The perfect reader's repairs from the empty state; ``visit`` gives a state's run and file texts."""
    state: frozenset[str] = frozenset()
    steps: list[HunkStep] = []
    while len(state) < len(group):
        run, texts = visit(state)
        evidence = first_failure(run.shown(shown))  # what the agent is shown
        ranked = [(rank, unit.unit) for unit in group if unit.unit not in state
                  and (rank := reader_rank(evidence, texts[unit.path], unit.path, unit.function,
                                           unit.edit())) is not None]
        if not ranked:
            break
        rank, unit = min(ranked)
        names = suspects(evidence)
        function = next(u.function for u in group if u.unit == unit).rsplit(".", 1)[-1]
        steps.append(HunkStep(unit, rank, tuple(names[:names.index(function)]),
                              tuple((f.path, f.function) for f in evidence.frames)))
        state = state | {unit}
    return tuple(steps)


def issue_text(group: tuple[UnitFault, ...], run: CheckRun, repo: str) -> tuple[str, str]:
    """(issue text, kind) from the real failing run of all faults: the symptoms, never the fix.
    Each failing test function is named once (with its first parameter set's message)."""
    sections = failure_sections(run.output)
    failing = read_failure(run.output).failing or union_tests(group)
    first: dict[str, str] = {}
    for i, test in enumerate(failing):
        errors = read_failure(sections[i]).errors if i < len(sections) else ()
        first.setdefault(test.split("[", 1)[0], next((e for e in errors if e.strip()), "the test fails"))
    symptoms = [f"`{test}` fails: {message[:MAX_MESSAGE]}" for test, message in list(first.items())[:MAX_SHOWN]]
    more = f" (and {len(first) - MAX_SHOWN} more failing tests)" if len(first) > MAX_SHOWN else ""
    head = read_failure(sections[0]).errors if sections else ()
    kind = "assertion" if head and head[0].startswith(("AssertionError", "assert", "Failed")) else "exception"
    return f"Bug report for `{repo}`: " + "; ".join(symptoms) + more, kind


def failure_sections(output: str) -> list[str]:
    """Each failure section of a run as an output of its own (a header line and its body)."""
    sections: list[list[str]] = []
    inside = False
    for line in output.splitlines():
        if line.startswith("___") and line.rstrip().endswith("___"):
            sections.append(["=" * 10 + " FAILURES " + "=" * 10, line])
            inside = True
        elif line.startswith("====="):
            inside = False
        elif inside:
            sections[-1].append(line)
    return ["\n".join(s) for s in sections]
