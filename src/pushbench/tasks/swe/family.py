"""QGP-SWE-lite: backlogs of issue-style repairs in a private copy of a pinned snapshot.

Each unit is a seeded one-line fault in a library function (``units.py``: how the catalogue is
mined) with a local verifier: the snapshot's own tests that catch it, run sandboxed in the copy.
The agent sees an issue per unit — the failing test and its error message from a real run, never
the fix — and works with ``list_units``, ``read_file``, ``search_files``, ``edit``, ``run_tests``,
``submit``, ``status``, ``final``. A unit counts when its tests pass at submit.

Building re-checks every catalogue unit on a copy carrying all of its repository's faults: its
tests fail there (that run's output is the issue text), the reader still finds its repair from
that output, and they pass once only its own reference repair is applied through the
agent-facing ``edit`` rule. The first ``units_per_repo`` units that pass are used. Tasks: per repository, the units (shuffled by seed) are
cut into disjoint backlogs of N in {2, 4, 8}.
"""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, cast

from pushbench import config, guidance
from pushbench.tasks.base import BuiltTask, TaskSpec
from pushbench.tasks.swe.reader import read_failure
from pushbench.tasks.swe.pool import close_idle, open_workspace, release
from pushbench.tasks.swe.runs import CheckRun, run_tests, warm_workspaces
from pushbench.tasks.swe.units import UnitFault, inject, load_catalogue, reader_rank
from pushbench.verifier import Verifier, load_hidden

TOOLS = ["list_units", "read_file", "search_files", "edit", "run_tests", "submit", "status", "final"]
OBJECTIVE = (
    "Repair {n} issues in the `{repo}` repository (a private copy; its tests are the verifier). "
    "Each unit is an issue: a test of the repository's own suite that fails. list_units() shows "
    "the backlog; read_file(path, start, end) and search_files(query) show the code; edit(path, "
    "old, new) replaces one exact occurrence of text; run_tests(unit) runs that unit's tests; "
    "submit(unit) has a unit verified (" + guidance.UNIT_VERIFIED_SWE + "); status() shows the verified "
    "count; final(count) ends the episode. Fix the library code, not the tests. The task is done "
    "when {n} units are accepted."
)
MAX_TITLE = 320


@dataclass(frozen=True)
class UnitCheck:
    """The two build-time runs of one unit, on a copy carrying every fault of its repository."""

    unit: UnitFault
    broken: CheckRun  # all faults present: must fail
    fixed: CheckRun  # only this unit's reference repair applied (via edit): must pass
    rank: int | None  # where the reader ranks the true repair, given the broken run's output

    @property
    def ok(self) -> bool:
        return not self.broken.passed and self.fixed.passed and self.rank is not None


def issue_title(unit: UnitFault, run: CheckRun) -> tuple[str, str]:
    """(title, kind) from a real failing run: the failing test and its error, not the fix."""
    evidence = read_failure(run.output)
    test = evidence.failing[0] if evidence.failing else unit.tests[0]
    errors = [e for e in evidence.errors if e.strip()][:2]
    message = " | ".join(errors) if errors else "the test fails"
    kind = "assertion" if errors and errors[0].startswith(("AssertionError", "assert", "Failed")) else "exception"
    title = f"`{test}` fails: {message}"
    return (title if len(title) <= MAX_TITLE else title[: MAX_TITLE - 3] + "..."), kind


def check_unit(unit: UnitFault, others: list[UnitFault], snapshot_root: Path | None = None,
               cache: Any = "default") -> UnitCheck:
    """Run a unit's tests with every fault in place, then with only its own repair applied."""
    from pushbench.tasks.swe.env import edit_text  # the agent-facing edit's own replacement rule

    ws = open_workspace(unit.repo, snapshot_root)
    try:
        inject(ws, [unit, *others])
        broken = run_tests(ws, list(unit.tests), cache)
        rank = reader_rank(read_failure(broken.output), ws.read(unit.path), unit.path, unit.function, unit.edit())
        old, new = unit.fix_strings(ws.read(unit.path))
        ws.write(unit.path, edit_text(ws.read(unit.path), old, new))
        fixed = run_tests(ws, list(unit.tests), cache)
    finally:
        release(ws)
    return UnitCheck(unit, broken, fixed, rank)


def check_repo(units: list[UnitFault], snapshot_root: Path | None = None, cache: Any = "default",
               workers: int = 2) -> list[UnitCheck]:
    def one(unit: UnitFault) -> UnitCheck:
        return check_unit(unit, [u for u in units if u.unit != unit.unit and u.repo == unit.repo],
                          snapshot_root, cache)
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(one, units))


def unit_steps(rank: int, read_lines: int, function_lines: int) -> int:
    """Tool calls a perfect reader spends on one unit: run, search, read, (edit, run) per try, submit.
    A wrong try also costs the edit that reverts it."""
    reads = max(1, -(-function_lines // read_lines))
    return 1 + 1 + reads + 2 * rank + (rank - 1) + 1


class SweFamily:
    name = "swe"

    def build(self, params: dict[str, Any], snapshot_root: Path | None = None) -> list[BuiltTask]:
        catalogue = load_catalogue()
        seed = int(config.params("seed"))
        tasks: list[BuiltTask] = []
        for repo in sorted(params["repos"]):  # the configured snapshots (units mined from each)
            units = [u for u in catalogue if u.repo == repo]
            checks = {c.unit.unit: c for c in check_repo(units, snapshot_root, cache=None)}  # fresh runs
            valid = [u for u in units if checks[u.unit].ok and checks[u.unit].rank <= params["max_rank"]]
            need = sum(n * params["backlogs"][n] for n in params["targets"])
            if len(valid) < need:
                bad = sorted(set(checks) - {u.unit for u in valid})
                raise ValueError(f"swe: {repo} has {len(valid)} units that fail broken, pass repaired and "
                                 f"stay findable (not: {bad}); its backlogs need {need}")
            units = valid[: params["units_per_repo"]]
            order = list(units)
            random.Random(f"{seed}:swe:{repo}").shuffle(order)
            for target in params["targets"]:
                for index in range(params["backlogs"][target]):
                    chunk, order = order[:target], order[target:]
                    tasks.append(self._task(repo, target, index, chunk, checks, params, snapshot_root))
        return tasks

    def _task(self, repo: str, target: int, index: int, chunk: list[UnitFault], checks: dict[str, UnitCheck],
              params: dict[str, Any], snapshot_root: Path | None) -> BuiltTask:
        task_id = f"swe-{repo}-n{target}-{chr(ord('a') + index)}"
        budget = int(params["budgets"][target])
        rows, hidden_units, steps = [], {}, 2  # list_units and final
        for i, unit in enumerate(chunk, 1):
            unit_id = f"U{i:02d}"
            title, kind = issue_title(unit, checks[unit.unit].broken)
            rows.append({"id": unit_id, "kind": kind, "title": title})
            hidden_units[unit_id] = asdict(unit)
            steps += unit_steps(checks[unit.unit].rank or unit.rank, params["read_lines"],
                                _function_lines(unit, snapshot_root))
        if steps > params["max_oracle_fraction"] * budget:
            raise ValueError(f"{task_id}: a perfect reader needs {steps} steps, over "
                             f"{params['max_oracle_fraction']:.0%} of the budget {budget}")
        spec = TaskSpec(task_id=task_id, family="swe", repo=repo, predicate="repair",
                        objective=OBJECTIVE.format(n=target, repo=repo), target=target, budget=budget,
                        tools=TOOLS, oracle_steps=steps,
                        settings={"units": rows, "read_lines": params["read_lines"]})
        return BuiltTask(spec=spec, hidden={"task_id": task_id, "units": hidden_units})

    def episode_metrics(self, events: list[dict[str, Any]], task: TaskSpec) -> dict[str, Any]:
        """Work-unit metrics (scoring hook): per-unit and per-type results, test runs, recoveries."""
        from pushbench.scoring.items import tool_calls
        from pushbench.scoring.units import unit_metrics
        from pushbench.tasks.swe.env import SweEnv

        return {"status_calls": tool_calls(events, "status"),
                **unit_metrics(events, task.settings["units"], SweEnv.change_tools, SweEnv.submit_tool)}

    def warm(self, tasks: list[TaskSpec]) -> None:
        """The snapshots' bytecode and fork-server probe, built before the runner forks (``runs.warm_workspaces``)."""
        warm_workspaces(cast(str, t.repo) for t in tasks)  # every SWE task names its snapshot

    def release_idle(self) -> None:
        """Remove this process's idle workspace copies now (``pool``; Ray workers may be killed, not ended)."""
        close_idle()

    def environment(self, task: TaskSpec, snapshot_root: Path | None = None, hidden_root: Path | None = None,
                    sink: Any = None) -> Any:
        from pushbench.tasks.swe.env import SweEnv

        hidden = load_hidden("swe", task.task_id, hidden_root)
        faults = {u: UnitFault(**{**row, "tests": tuple(row["tests"])}) for u, row in hidden["units"].items()}
        verifier = Verifier(task.task_id, task.target, lambda _item: False, sink=sink, retry_rejected=True)
        ws = open_workspace(cast(str, task.repo), snapshot_root)
        try:
            inject(ws, list(faults.values()))
        except Exception:
            ws.close()
            raise
        return SweEnv(task, verifier, ws, faults)


def _function_lines(unit: UnitFault, snapshot_root: Path | None) -> int:
    from pushbench.tasks.swe.faults import function_named, parse_python

    text = ((snapshot_root or config.SNAPSHOT_SRC) / unit.repo / unit.path).read_text(encoding="utf-8")
    func = function_named(parse_python(text), unit.function)
    return (func.end_lineno - func.lineno + 1) if func else 1
