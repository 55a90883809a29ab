"""The long-horizon split of sweissues: a backlog of multi-hunk issues whose hunks sit in different files.

A long task is one repository copy with m issues (``I01``..), each of 2-3 catalogue units whose
faults sit in *different files*; all m issues' faults are injected together. Each issue is checked
by the union of its units' targeted tests, and the task is done when every issue is accepted. The
issue text names symptoms (the error messages a user saw), never a file, a test or the fix; the
tool results name the places (the tracebacks of a run).

Length by need: a perfect reader spends a run and a submit per issue and, per hunk, a search, a
read of the function (a page of code) and an edit with the run after it, so 8-10 hunks take
40-60 of the 100 actions; every run shows pytest's full report (``shown_chars``).

Building (every run real and jailed, through the SWE test cache), per repository:
1. ``partitions`` seeded shuffles of the repository's units, each cut into disjoint issues of the
   ``partition`` sizes (``partition``); each issue is checked on its own (``issues.check_group``):
   its union runs on all 2^k states of its hunks; the reference repair (every hunk: the pristine
   copy) passes, every partial repair fails, and the perfect reader finds each hunk from the first
   failure it is shown;
2. backlogs of issues of one partition (``structures``: hunks per issue, taken in turn) whose estimated
   perfect path (``oracle.backlog_steps``) lies in [``min_oracle_steps``, ``max_oracle_fraction`` x budget];
   each issue's union then runs once on the copy the agent starts from (every fault of the backlog
   in place): it must fail there, and its failures are the issue's text.
The catalogue's units are independent (``tasks/swe/units.py``): one unit's faults never decide
another's tests, so an issue checked on its own behaves the same beside the other issues' faults.
"""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pushbench.tasks.base import BuiltTask, TaskSpec
from pushbench.tasks.swe.pool import open_workspace, release
from pushbench.tasks.swe.reader import read_failure
from pushbench.tasks.swe.runs import CheckRun, run_tests
from pushbench.tasks.swe.units import UnitFault, inject
from pushbench.tasks.sweissues.oracle import backlog_steps, tried_path
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
    issues: tuple[GroupCheck, ...]  # one per issue, each checked on its own (its 2^k states)
    initial: tuple[CheckRun, ...]  # each issue's union with every fault of the backlog in place

    @property
    def runs(self) -> int:
        return sum(len(c.runs) for c in self.issues) + len(self.initial)


def partition(units: list[UnitFault], sizes: list[int], rng: random.Random) -> list[tuple[UnitFault, ...]]:
    """Disjoint issues of the given sizes from a seeded shuffle of the units, each issue's hunks in
    different files (an issue that cannot be filled is left out)."""
    pool = list(units)
    rng.shuffle(pool)
    issues = []
    for size in sizes:
        issue: list[UnitFault] = []
        for unit in list(pool):
            if len(issue) < size and unit.path not in {u.path for u in issue}:
                issue.append(unit)
                pool.remove(unit)
        if len(issue) == size:
            issues.append(tuple(sorted(issue, key=lambda u: u.unit)))
        else:
            pool += issue
    return issues


def initial_runs(issues: tuple[tuple[UnitFault, ...], ...], snapshot_root: Path | None = None,
                 cache: Any = "default") -> tuple[CheckRun, ...]:
    """Each issue's union on the copy the agent starts from (every fault of the backlog injected)."""
    ws = open_workspace(issues[0][0].repo, snapshot_root)
    try:
        inject(ws, [u for issue in issues for u in issue])
        return tuple(run_tests(ws, list(union_tests(issue)), cache) for issue in issues)
    finally:
        release(ws)


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
        self.checked = 0  # jailed runs the checks asked for (cached ones included)

    def build(self, catalogue: list[UnitFault]) -> list[BuiltTask]:
        tasks: list[BuiltTask] = []
        with ThreadPoolExecutor(int(self.params["workers"])) as pool:
            for repo, want in sorted(self.params["tasks"].items()):
                units = [u for u in catalogue if u.repo == repo]
                issues = self._issue_pool(repo, units, pool)
                kept = self._backlogs(repo, issues, int(want), pool)
                tasks += [self._task(repo, i, check) for i, check in enumerate(kept)]
        return tasks

    # --- the issues: seeded partitions of the units, each issue checked on its own ------------------
    def _issue_pool(self, repo: str, units: list[UnitFault], pool: ThreadPoolExecutor) -> list[list[GroupCheck]]:
        """Per partition (``partitions`` seeded shuffles of the repository's units cut into issues of
        ``partition`` sizes, each issue's hunks in different files), its issues that pass every check."""
        sizes = [int(k) for k in self.params["partition"]]
        cuts = [partition(units, sizes, random.Random(f"{self.seed}:sweissues-long:{repo}:{p}"))
                for p in range(int(self.params["partitions"]))]
        shown, max_rank = int(self.params["shown_chars"]), int(self.params["max_rank"])
        flat = [issue for cut in cuts for issue in cut]
        checks = dict(zip(flat, pool.map(lambda d: self._check_issue(d, shown, max_rank), flat)))
        return [[check for i in cut if (check := checks[i]) is not None] for cut in cuts]

    def _check_issue(self, issue: tuple[UnitFault, ...], shown: int, max_rank: int) -> GroupCheck | None:
        """The issue's 2^k states; if every check passes, with the tries the reader really spends."""
        check = check_group(issue, self.snapshot_root, shown=shown)
        self.checked += len(check.runs)
        return None if check.problems(max_rank) else tried_path(check, shown, self.snapshot_root)

    # --- the backlogs: issues of one partition (so disjoint), the perfect path in range -------------
    def _draws(self, repo: str, pools: list[list[GroupCheck]]):
        structures = [list(s) for s in self.params["structures"]]
        seen: set[frozenset[frozenset[str]]] = set()
        for attempt in range(int(self.params["draws"])):
            rng = random.Random(f"{self.seed}:sweissues-long:{repo}:backlog:{attempt}")
            order = list(pools[attempt % len(pools)])
            rng.shuffle(order)
            sizes = structures[(attempt // len(pools)) % len(structures)]
            chosen: list[GroupCheck] = []
            for size in sizes:
                pick = next((c for c in order if len(c.group) == size and c not in chosen), None)
                if pick is not None:
                    chosen.append(pick)
            key = frozenset(frozenset(u.unit for u in c.group) for c in chosen)
            if len(chosen) == len(sizes) and key not in seen and self._fits(chosen):
                seen.add(key)
                yield tuple(chosen)

    def _backlogs(self, repo: str, issues: list[list[GroupCheck]], want: int, pool: ThreadPoolExecutor) -> list[LongCheck]:
        kept: list[LongCheck] = []
        draws = list(self._draws(repo, issues))
        batch = max(2, int(self.params["workers"]))
        for start in range(0, len(draws), batch):
            if len(kept) >= want:
                break
            chunk = draws[start:start + batch]
            for chosen, initial in zip(chunk, pool.map(
                    lambda d: initial_runs(tuple(c.group for c in d), self.snapshot_root), chunk)):
                self.checked += len(initial)
                if not any(run.passed for run in initial):  # each issue fails where the agent starts
                    kept.append(LongCheck(chosen, initial))
        if len(kept) < want:
            raise ValueError(f"sweissues long: only {len(kept)} {repo} backlogs pass every check; params want {want}")
        return kept[:want]

    def _fits(self, chosen: list[GroupCheck]) -> bool:
        steps = backlog_steps(chosen, int(self.params["read_lines"]), self.snapshot_root)
        return int(self.params["min_oracle_steps"]) <= steps <= self.params["max_oracle_fraction"] * self.params["budget"]

    def _task(self, repo: str, index: int, check: LongCheck) -> BuiltTask:
        p = self.params
        task_id = f"sweissues-long-{repo}-{index + 1:02d}"
        ids = [f"I{i:02d}" for i in range(1, len(check.issues) + 1)]
        units, hunks, hidden_issues = [], [], {}
        for issue_id, issue, initial in zip(ids, check.issues, check.initial):
            title, kind = symptoms(initial.output, repo)
            units.append({"id": issue_id, "kind": kind, "title": title})
            hunks += [{"id": f"{issue_id}:hunk:{n}", "issue": issue_id, "symptom": hunk_symptom(unit, initial)}
                      for n, unit in enumerate(issue.group, 1)]
            hidden_issues[issue_id] = {"tests": list(union_tests(issue.group)), "faults": [asdict(u) for u in issue.group]}
        files = sorted({u.path for issue in check.issues for u in issue.group})
        spec = TaskSpec(task_id=task_id, family="sweissues", repo=repo, predicate="repair",
                        objective=OBJECTIVE.format(m=len(ids), repo=repo, ids=", ".join(ids)), target=len(ids),
                        budget=int(p["budget"]), tools=TOOLS,
                        oracle_steps=backlog_steps(check.issues, int(p["read_lines"]), self.snapshot_root),
                        settings={"split": "long", "units": units, "read_lines": p["read_lines"],
                                  "shown_chars": p["shown_chars"], "edit_context": p["edit_context"], "n_issues": len(ids), "n_hunks": len(hunks),
                                  "hunks_per_issue": [len(i.group) for i in check.issues], "repository": repo,
                                  "files": files, "hunks": hunks})
        return BuiltTask(spec=spec, hidden={"task_id": task_id, "issues": hidden_issues})


def hunk_symptom(unit: UnitFault, broken: CheckRun) -> str:
    """What this hunk breaks: its failing tests as the issue's broken run names them."""
    failing = [t for t in broken.outcomes if t.split("[", 1)[0] in unit.tests
               and broken.outcomes[t] in ("FAILED", "ERROR")]
    shown = sorted({t.split("[", 1)[0] for t in failing}) or list(unit.tests)
    return "the failing behaviour of " + ", ".join(f"`{t}`" for t in shown) + " is fixed"
