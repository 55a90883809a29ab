"""The long-horizon split of sweissues: a backlog of multi-hunk issues whose hunks sit in different files.

A long task is one repository copy with m issues (``I01``..), each of 2-3 catalogue units whose
faults sit in *different files*; all m issues' faults are injected together. Each issue is checked
by the union of its units' targeted tests, and the task is done when every issue is accepted. The
issue text names symptoms (the error messages a user saw), never a file, a test or the fix; the
tool results name the places (the tracebacks of a run).

Length by need: a perfect reader spends a run and a submit per issue and, per hunk, a search, a
read of the function (a page of code) and an edit with the run after it, so 8-10 hunks take
40-60 of the 100 actions; every run shows pytest's full report (``shown_chars``).

Building (every run real and jailed, through the SWE test cache): per repository, seeded draws of
units are cut into issues (``compose``); for each issue the union runs on all 2^k states of its
hunks with the other issues' faults in place (``issues.check_group``): the reference repair passes,
every partial repair fails, and the perfect reader finds each hunk from the first failure it is
shown; then each union passes on the pristine copy (every hunk of every issue repaired). A draw
whose estimated perfect path is outside [``min_oracle_steps``, ``max_oracle_fraction`` x budget]
is dropped. The first draws that pass are used.
"""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pushbench.tasks.base import BuiltTask, TaskSpec
from pushbench.tasks.swe.family import _function_lines
from pushbench.tasks.swe.pool import open_workspace, release
from pushbench.tasks.swe.reader import read_failure
from pushbench.tasks.swe.runs import run_tests
from pushbench.tasks.swe.units import UnitFault
from pushbench.tasks.sweissues.issues import GroupCheck, check_group, failure_sections, union_tests

TOOLS = ["list_units", "read_file", "search_files", "edit", "run_tests", "submit", "final"]
OBJECTIVE = (
    "Resolve {m} issues in the `{repo}` repository (a private copy; its tests are the verifier). "
    "list_units() shows the issues {ids}: bug reports naming what fails and how. "
    "read_file(path, start, end) and search_files(query) show the code; edit(path, old, new) "
    "replaces one exact occurrence of text; run_tests(unit) runs the tests that decide that issue; "
    "submit(unit) has its repair verified (accepted only if all of those tests pass); final(count) "
    "ends the episode. An issue's repair may need changes in several files. Fix the library code, "
    "not the tests. The task is done when all {m} issues are accepted."
)
MAX_SYMPTOMS = 4  # messages quoted in an issue; the rest are counted
MAX_MESSAGE = 160


@dataclass(frozen=True)
class LongCheck:
    issues: tuple[GroupCheck, ...]  # one per issue, each run with the other issues' faults in place
    pristine: tuple[bool, ...]  # each issue's union on the copy with every hunk repaired

    def problems(self, max_rank: int) -> list[str]:
        out = [f"issue {i + 1}: {p}" for i, c in enumerate(self.issues) for p in c.problems(max_rank)]
        return out + [f"issue {i + 1} fails on the pristine copy" for i, ok in enumerate(self.pristine) if not ok]


def compose(units: list[UnitFault], sizes: list[int], rng: random.Random) -> tuple[tuple[UnitFault, ...], ...] | None:
    """Disjoint issues of the given sizes from a seeded shuffle, each issue's hunks in different files."""
    pool = list(units)
    rng.shuffle(pool)
    issues = []
    for size in sizes:
        issue: list[UnitFault] = []
        for unit in list(pool):
            if len(issue) < size and unit.path not in {u.path for u in issue}:
                issue.append(unit)
                pool.remove(unit)
        if len(issue) < size:
            return None
        issues.append(tuple(sorted(issue, key=lambda u: u.unit)))
    return tuple(issues)


def check_long(issues: tuple[tuple[UnitFault, ...], ...], shown: int, snapshot_root: Path | None = None,
               cache: Any = "default") -> LongCheck:
    checks = []
    for i, issue in enumerate(issues):
        context = tuple(u for j, other in enumerate(issues) if j != i for u in other)
        checks.append(check_group(issue, snapshot_root, cache, context=context, shown=shown))
    ws = open_workspace(issues[0][0].repo, snapshot_root)
    try:
        pristine = tuple(run_tests(ws, list(union_tests(issue)), cache).passed for issue in issues)
    finally:
        release(ws)
    return LongCheck(tuple(checks), pristine)


def oracle_steps(check: LongCheck, read_lines: int, snapshot_root: Path | None) -> int:
    """Tool calls a perfect reader spends: list and final; per issue a first run and the submit; per
    hunk a search, the reads of its function and its tries (each with a run, a wrong one reverted)."""
    steps = 2
    for issue in check.issues:
        steps += 2
        by_unit = {u.unit: u for u in issue.group}
        for hunk in issue.path:
            lines = _function_lines(by_unit[hunk.unit], snapshot_root)
            steps += 1 + max(1, -(-lines // read_lines)) + 2 * hunk.rank + (hunk.rank - 1)
    return steps


def symptoms(run_output: str, repo: str) -> tuple[str, str]:
    """(issue text, kind) from the real failing run: the error messages, without tests, files or the fix."""
    sections = failure_sections(run_output)
    seen: list[str] = []
    for section in sections:
        errors = [e for e in read_failure(section).errors if e.strip()]
        message = (errors[0] if errors else "a test fails")[:MAX_MESSAGE]
        if message not in seen:
            seen.append(message)
    more = f" (and {len(seen) - MAX_SYMPTOMS} more)" if len(seen) > MAX_SYMPTOMS else ""
    head = read_failure(sections[0]).errors if sections else ()
    kind = "assertion" if head and head[0].startswith(("AssertionError", "assert", "Failed")) else "exception"
    text = f"Bug report for `{repo}`: {len(sections)} checks fail: " + "; ".join(seen[:MAX_SYMPTOMS]) + more
    return text, kind


class LongSplit:
    """Builds the long tasks of one manifest (``params``: the ``sweissues.long`` block)."""

    def __init__(self, params: dict[str, Any], seed: int, snapshot_root: Path | None):
        self.params, self.seed, self.snapshot_root = params, seed, snapshot_root

    def build(self, catalogue: list[UnitFault]) -> list[BuiltTask]:
        tasks: list[BuiltTask] = []
        with ThreadPoolExecutor(int(self.params["workers"])) as pool:
            for repo, want in sorted(self.params["tasks"].items()):
                units = [u for u in catalogue if u.repo == repo]
                kept = self._verified(repo, units, int(want), pool)
                tasks += [self._task(repo, i, check) for i, check in enumerate(kept)]
        return tasks

    def _draws(self, repo: str, units: list[UnitFault]):
        """Candidate backlogs, structure by structure in turn, never the same backlog twice."""
        structures = [list(s) for s in self.params["structures"]]
        seen: set[frozenset[frozenset[str]]] = set()
        for attempt in range(int(self.params["draws"])):
            sizes = structures[attempt % len(structures)]
            issues = compose(units, sizes, random.Random(f"{self.seed}:sweissues-long:{repo}:{attempt}"))
            key = frozenset(frozenset(u.unit for u in issue) for issue in issues) if issues else None
            if issues and key not in seen:
                seen.add(key)
                yield issues

    def _verified(self, repo: str, units: list[UnitFault], want: int, pool: ThreadPoolExecutor) -> list[LongCheck]:
        kept: list[LongCheck] = []
        draws = list(self._draws(repo, units))
        batch = max(2, int(self.params["workers"]))
        for start in range(0, len(draws), batch):
            if len(kept) >= want:
                break
            checks = pool.map(lambda d: check_long(d, int(self.params["shown_chars"]), self.snapshot_root),
                              draws[start:start + batch])
            kept += [c for c in checks if self._fits(c)]
        if len(kept) < want:
            raise ValueError(f"sweissues long: only {len(kept)} {repo} backlogs pass every check; params want {want}")
        return kept[:want]

    def _fits(self, check: LongCheck) -> bool:
        if check.problems(int(self.params["max_rank"])):
            return False
        steps = oracle_steps(check, int(self.params["read_lines"]), self.snapshot_root)
        return int(self.params["min_oracle_steps"]) <= steps <= self.params["max_oracle_fraction"] * self.params["budget"]

    def _task(self, repo: str, index: int, check: LongCheck) -> BuiltTask:
        p = self.params
        task_id = f"sweissues-long-{repo}-{index + 1:02d}"
        ids = [f"I{i:02d}" for i in range(1, len(check.issues) + 1)]
        units, hunks, hidden_issues = [], [], {}
        for issue_id, issue in zip(ids, check.issues):
            title, kind = symptoms(issue.broken.output, repo)
            units.append({"id": issue_id, "kind": kind, "title": title})
            hunks += [{"id": f"{issue_id}:hunk:{n}", "issue": issue_id, "symptom": hunk_symptom(unit, issue)}
                      for n, unit in enumerate(issue.group, 1)]
            hidden_issues[issue_id] = {"tests": list(union_tests(issue.group)), "faults": [asdict(u) for u in issue.group]}
        files = sorted({u.path for issue in check.issues for u in issue.group})
        spec = TaskSpec(task_id=task_id, family="sweissues", repo=repo, predicate="repair",
                        objective=OBJECTIVE.format(m=len(ids), repo=repo, ids=", ".join(ids)), target=len(ids),
                        budget=int(p["budget"]), tools=TOOLS,
                        oracle_steps=oracle_steps(check, int(p["read_lines"]), self.snapshot_root),
                        settings={"split": "long", "units": units, "read_lines": p["read_lines"],
                                  "shown_chars": p["shown_chars"], "n_issues": len(ids), "n_hunks": len(hunks),
                                  "hunks_per_issue": [len(i.group) for i in check.issues], "repository": repo,
                                  "files": files, "hunks": hunks})
        return BuiltTask(spec=spec, hidden={"task_id": task_id, "issues": hidden_issues})


def hunk_symptom(unit: UnitFault, check: GroupCheck) -> str:
    """What this hunk breaks: its failing tests as the issue's broken run names them."""
    failing = [t for t in check.broken.outcomes if t.split("[", 1)[0] in unit.tests
               and check.broken.outcomes[t] in ("FAILED", "ERROR")]
    shown = sorted({t.split("[", 1)[0] for t in failing}) or list(unit.tests)
    return "the failing behaviour of " + ", ".join(f"`{t}`" for t in shown) + " is fixed"
