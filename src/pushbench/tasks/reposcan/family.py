"""QGP-RepoScan: collect N distinct code locations that satisfy a predicate, via code search.

Three predicate families, each decidable from what a search hit shows:
- ``fixture``: test functions that take a given fixture as a parameter (the signature shows it);
- ``documented``: non-test functions or methods that have a docstring (its first line is shown);
- ``calls``: test functions whose body calls a given API (query-matching body lines show it).
Hidden valid sets come from the AST (``holds``); the oracle's step count comes from the family's
reader (``reader.py``: what a careful model concludes from a hit's visible text, used by SimLM too).
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path
from typing import Any, cast

from pushbench import config
from pushbench.snapshots import snapshot_dir
from pushbench.tasks.base import BuiltTask, TaskSpec
from pushbench.tasks.reposcan.codeindex import CodeUnit, load_units
from pushbench.tasks.reposcan.reader import (PREDICATES, TOOLS, Goal, expansion_terms, judge_hit, name_tokens,
                                             objective_text, parse_objective)
from pushbench.tasks.reposcan.search import CodeSearch, search_for
from pushbench.verifier import Verifier


# --- ground truth from the AST (builder only) -------------------------------------------------

def _calls_prefix(node: ast.AST, prefix: str) -> bool:
    return any(isinstance(n, ast.Call) and ast.unparse(n.func).startswith(prefix) for n in ast.walk(node))


def holds(goal: Goal, unit: CodeUnit) -> bool:
    node = unit.node
    if goal.predicate == "fixture":
        args = node.args.args + node.args.posonlyargs + node.args.kwonlyargs if unit.kind == "function" else []
        return unit.is_test and any(a.arg == goal.arg for a in args)
    if goal.predicate == "documented":
        return unit.kind == "function" and not unit.is_test and unit.doc is not None
    if goal.predicate == "calls":
        return unit.is_test and _calls_prefix(node, goal.arg)
    raise ValueError(f"unknown predicate {goal.predicate!r}")


def oracle_steps(goal: Goal, search: CodeSearch) -> int:
    """Tool calls a reader with perfect judgment and memory needs: natural queries, pages in rank
    order, one submit per page that has new valid hits, then final."""
    found: set[str] = set()
    names: Counter[str] = Counter()
    used: set[str] = set()
    steps = 0
    query: str | None = goal.seed_query
    while query is not None:
        used.add(query)
        page_no, pages = 1, 1
        while page_no <= pages and len(found) < goal.target:
            page = search.page(query, page_no)
            pages, steps = page.pages, steps + 1
            new = []
            for hit in page.hits:
                if judge_hit(goal, hit.uid, hit.snippet) and hit.uid not in found:
                    new.append(hit.uid)
                    names.update(name_tokens(hit.uid))
            if new:
                found.update(new)
                steps += 1
            page_no += 1
        if len(found) >= goal.target:
            return steps + 1
        options = expansion_terms(goal, names, used)
        query = options[0] if options else None
    raise ValueError(f"{goal}: natural queries reach only {len(found)} valid items")


class RepoScanFamily:
    name = "reposcan"

    def build(self, params: dict[str, Any], snapshot_root: Path | None = None) -> list[BuiltTask]:
        tasks = []
        for repo, repo_params in sorted(params["repos"].items()):
            tree = snapshot_dir(repo, snapshot_root or config.SNAPSHOT_SRC)
            units = load_units(tree)
            search = search_for(tree, params["max_results"], params["page_size"])
            for predicate in PREDICATES:
                arg = "" if predicate == "documented" else repo_params[predicate]
                valid = sorted(u.uid for u in units if holds(Goal(repo, predicate, arg, 0), u))
                if len(valid) < params["min_valid"]:
                    raise ValueError(f"{repo}/{predicate}: {len(valid)} valid items < {params['min_valid']}")
                for target in params["targets"]:
                    tasks.append(self._task(Goal(repo, predicate, arg, target), valid, search, params))
        return tasks

    def _task(self, goal: Goal, valid: list[str], search: CodeSearch, params: dict[str, Any]) -> BuiltTask:
        budget = int(params["budgets"][goal.target])
        task_id = f"reposcan-{goal.repo}-{goal.predicate}-n{goal.target:03d}"
        objective = objective_text(goal)
        if parse_objective(objective) != goal:
            raise AssertionError(f"{task_id}: objective text does not carry its goal")
        steps = oracle_steps(goal, search)
        if steps > params["max_oracle_fraction"] * budget:
            raise ValueError(f"{task_id}: oracle needs {steps} steps, over "
                             f"{params['max_oracle_fraction']:.0%} of the budget {budget}")
        spec = TaskSpec(task_id=task_id, family="reposcan", repo=goal.repo, predicate=goal.predicate,
                        objective=objective, target=goal.target, budget=budget, tools=TOOLS,
                        oracle_steps=steps,
                        settings={"page_size": params["page_size"], "max_results": params["max_results"],
                                  "max_submit": params["max_submit"], "predicate_arg": goal.arg})
        return BuiltTask(spec=spec, hidden={"task_id": task_id, "valid": valid})

    def episode_metrics(self, events: list[dict[str, Any]], task: TaskSpec) -> dict[str, Any]:
        """RepoScan's own metrics (scoring hook): repeated (query, page) searches and status calls."""
        from pushbench.scoring.items import repeated_searches, tool_calls

        return {"repeated_searches": repeated_searches(events), "status_calls": tool_calls(events, "status")}

    def warm(self, tasks: list[TaskSpec]) -> None:
        """Build the code search of every snapshot these tasks search (the runner, before forking)."""
        for repo, results, size in sorted({(t.repo, t.settings["max_results"], t.settings["page_size"])
                                           for t in tasks}):
            search_for(snapshot_dir(cast(str, repo), config.SNAPSHOT_SRC), results, size)  # a RepoScan task names its snapshot

    def environment(self, task: TaskSpec, snapshot_root: Path | None = None, hidden_root: Path | None = None,
                    sink: Any = None) -> Any:
        from pushbench.tasks.reposcan.env import RepoScanEnv

        tree = snapshot_dir(cast(str, task.repo), snapshot_root or config.SNAPSHOT_SRC)
        search = search_for(tree, task.settings["max_results"], task.settings["page_size"])
        verifier = Verifier.for_item_set("reposcan", task.task_id, task.target, hidden_root, sink=sink)
        return RepoScanEnv(task, search, verifier)
