"""SWE issues with structure (the SWE-bench Lite analogue): one issue, 1-3 hunks, one file.

Each task is a single bug report against a private copy of a pinned snapshot in which k
co-located SWE-lite faults (k = 1, 2, 3: catalogue units in the same file) are injected. The
issue text quotes the symptoms of a real run of the union of the units' targeted tests (which
tests fail and how), never the fix; only the verifier knows which tests decide it
(``data/hidden/sweissues/``). The repair needs every hunk: ``submit`` is accepted only when the
whole union passes. Building runs the union on all 2^k repair states (``issues.check_group``):
the reference repair passes, each partial repair fails, and the perfect reader finds every hunk
from the failures it is shown. Tools are SWE-lite's without ``status`` (one issue: the submit
verdict says it all); the manifest records ``n_hunks``, ``repository`` and ``file``.

The same manifest holds the long-horizon split (``long.py``, params ``sweissues.long``): backlogs
of 3-4 such issues whose hunks sit in different files, ``settings["split"] = "long"``.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import Any, cast

from pushbench import config
from pushbench.tasks.base import BuiltTask, TaskSpec
from pushbench.tasks.swe.family import _function_lines
from pushbench.tasks.swe.pool import close_idle, open_workspace
from pushbench.tasks.swe.runs import warm_workspaces
from pushbench.tasks.swe.units import UnitFault, inject, load_catalogue
from pushbench.tasks.sweissues.issues import GroupCheck, candidates, check_group, issue_text, union_tests
from pushbench.tasks.sweissues.long import LongSplit, hunk_symptom
from pushbench.verifier import Verifier, load_hidden

TOOLS = ["list_units", "read_file", "search_files", "edit", "run_tests", "submit", "final"]
ISSUE = "I01"
OBJECTIVE = (
    "Resolve 1 issue in the `{repo}` repository (a private copy; its tests are the verifier). "
    "list_units() shows the issue {issue}: a bug report naming the tests that fail and how. "
    "read_file(path, start, end) and search_files(query) show the code; edit(path, old, new) "
    "replaces one exact occurrence of text; run_tests(unit) runs the tests that decide the issue; "
    "submit(unit) has the repair verified (accepted only if all of those tests pass); final(count) "
    "ends the episode. Fix the library code, not the tests. The task is done when the issue is accepted."
)


def reader_steps(check: GroupCheck, read_lines: int, snapshot_root: Path | None) -> int:
    """Tool calls a perfect reader spends: list, run, per hunk (search, reads, tries with a run
    after each and a revert after each wrong one), submit, final."""
    steps = 4
    by_unit = {u.unit: u for u in check.group}
    for hunk in check.path:
        lines = _function_lines(by_unit[hunk.unit], snapshot_root)
        steps += 1 + max(1, -(-lines // read_lines)) + 2 * hunk.rank + (hunk.rank - 1)
    return steps


class SweIssuesFamily:
    name = "sweissues"

    def build(self, params: dict[str, Any], snapshot_root: Path | None = None) -> list[BuiltTask]:
        catalogue = [u for u in load_catalogue() if u.repo in params["repos"]]
        seed = int(config.params("seed"))
        tasks: list[BuiltTask] = []
        for k in params["hunks"]:
            want = int(params["issues"][k])
            kept = self._verified(candidates(catalogue, k, seed), want, params, snapshot_root)
            if len(kept) < want:
                raise ValueError(f"sweissues: only {len(kept)} {k}-hunk groups pass every check; params want {want}")
            tasks += [self._task(check, k, i, params, snapshot_root) for i, check in enumerate(kept)]
        if params.get("long"):  # the long-horizon split (long.py), in the same manifest
            long = {"read_lines": params["read_lines"], "workers": params["workers"], **params["long"]}
            tasks += LongSplit(long, seed, snapshot_root).build(catalogue)
        return tasks

    def _verified(self, groups: list[tuple[UnitFault, ...]], want: int, params: dict[str, Any],
                  snapshot_root: Path | None) -> list[GroupCheck]:
        """The first ``want`` groups (in candidate order) that pass every check, checked in batches."""
        kept: list[GroupCheck] = []
        batch = max(2, int(params["workers"]))
        with ThreadPoolExecutor(int(params["workers"])) as pool:
            for start in range(0, len(groups), batch):
                if len(kept) >= want:
                    break
                checks = pool.map(lambda g: check_group(g, snapshot_root), groups[start:start + batch])
                kept += [c for c in checks if not c.problems(int(params["max_rank"]))]
        return kept[:want]

    def _task(self, check: GroupCheck, k: int, index: int, params: dict[str, Any],
              snapshot_root: Path | None) -> BuiltTask:
        first = check.group[0]
        task_id = f"sweissues-{first.repo}-h{k}-{index + 1:02d}"
        title, kind = issue_text(check.group, check.broken, first.repo)
        budget = int(params["budget"])
        steps = reader_steps(check, int(params["read_lines"]), snapshot_root)
        if steps > params["max_oracle_fraction"] * budget:
            raise ValueError(f"{task_id}: a perfect reader needs {steps} steps, over "
                             f"{params['max_oracle_fraction']:.0%} of the budget {budget}")
        hunks = [{"id": f"hunk:{i}", "symptom": hunk_symptom(unit, check.broken)} for i, unit in enumerate(check.group, 1)]
        spec = TaskSpec(task_id=task_id, family="sweissues", repo=first.repo, predicate="repair",
                        objective=OBJECTIVE.format(repo=first.repo, issue=ISSUE), target=1, budget=budget,
                        tools=TOOLS, oracle_steps=steps,
                        settings={"units": [{"id": ISSUE, "kind": kind, "title": title}],
                                  "read_lines": params["read_lines"], "n_hunks": k, "repository": first.repo,
                                  "file": first.path, "hunks": hunks})
        hidden = {"task_id": task_id, "tests": list(union_tests(check.group)),
                  "faults": [asdict(u) for u in check.group]}
        return BuiltTask(spec=spec, hidden=hidden)

    def episode_metrics(self, events: list[dict[str, Any]], task: TaskSpec) -> dict[str, Any]:
        """SWE-lite's work-unit metrics for the one issue, plus its structure."""
        from pushbench.scoring.units import unit_metrics
        from pushbench.tasks.sweissues.env import SweIssueEnv

        long = {"n_issues": task.settings["n_issues"]} if "n_issues" in task.settings else {}
        return {"n_hunks": task.settings["n_hunks"], **long,
                **unit_metrics(events, task.settings["units"], SweIssueEnv.change_tools, SweIssueEnv.submit_tool)}

    def warm(self, tasks: list[TaskSpec]) -> None:
        """The snapshots' bytecode and fork-server probe, built before the runner forks (``runs.warm_workspaces``)."""
        warm_workspaces(cast(str, t.repo) for t in tasks)  # every SWE task names its snapshot

    def release_idle(self) -> None:
        """Remove this process's idle workspace copies now (``pool``; Ray workers may be killed, not ended)."""
        close_idle()

    def environment(self, task: TaskSpec, snapshot_root: Path | None = None, hidden_root: Path | None = None,
                    sink: Any = None) -> Any:
        from pushbench.tasks.sweissues.env import SweIssueEnv

        hidden = load_hidden("sweissues", task.task_id, hidden_root)
        if "issues" in hidden:  # a long task: several issues, each with its own tests
            tests: Any = {issue: tuple(row["tests"]) for issue, row in hidden["issues"].items()}
            rows = [f for row in hidden["issues"].values() for f in row["faults"]]
        else:
            tests, rows = tuple(hidden["tests"]), hidden["faults"]
        faults = [UnitFault(**{**row, "tests": tuple(row["tests"])}) for row in rows]
        verifier = Verifier(task.task_id, task.target, lambda _item: False, sink=sink, retry_rejected=True)
        ws = open_workspace(cast(str, task.repo), snapshot_root)
        try:
            inject(ws, faults)
        except Exception:
            ws.close()
            raise
        return SweIssueEnv(task, verifier, ws, tests)

