"""QGP-Rows, the worked example family: collect N distinct rows of a real data set that satisfy a
condition stated in the objective (e.g. rows of the wine data where `alcohol` > 13.0).

The family is this subpackage: ``data.py`` (CSV files that ship inside the installed
scikit-learn, nothing downloaded), ``__init__.py`` (its declaration), this module (``build``
turns params into tasks and hidden answers, ``environment``
makes one episode's tools) and ``env.py`` with its tools rows(page), submit(ids), status() and
final(count). Valid ids reach the verifier only through ``BuiltTask.hidden``, which
``pushbench.tasks.manifests`` writes under ``data/hidden/rows/``.
"""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Any

from pushbench.tasks.base import BuiltTask, TaskSpec
from pushbench.tasks.rows.data import COLUMNS, load_rows, row_id
from pushbench.verifier import Verifier

TOOLS = ["rows", "submit", "status", "final"]
OPS = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}
OBJECTIVE = ("Collect {n} distinct rows of the `{dataset}` data set where column `{column}` {op} {value}. "
             "Use rows(page) to read the data set ({page_rows} rows per page, starting at page 1), "
             "submit(ids) to have rows checked, using row ids exactly as rows() shows them (`r` and a "
             "four-digit row number; at most {max_submit} ids per call), status() to see the verified "
             "count, and final(count) once at least {n} rows are accepted.")


def matching(dataset: str, column: str, op: str, value: float) -> list[str]:
    """Ids of the rows that satisfy the condition: the hidden answer (used by ``build`` only)."""
    col, holds = COLUMNS[dataset].index(column), OPS[op]
    return [row_id(i) for i, row in enumerate(load_rows(dataset)) if holds(float(row[col]), value)]


def oracle_steps(valid: list[str], target: int, page_rows: int, max_submit: int) -> int:
    """Tool calls a perfect reader needs: the pages up to the N-th valid row, its submits, final."""
    pages = int(valid[target - 1][1:]) // page_rows + 1
    return pages + -(-target // max_submit) + 1


class RowsFamily:
    name = "rows"

    def build(self, params: dict[str, Any], snapshot_root: Path | None = None) -> list[BuiltTask]:
        """One task per condition and target (``snapshot_root`` is unused: the data ship with
        scikit-learn)."""
        tasks = []
        for cond in params["conditions"]:
            valid = matching(cond["dataset"], cond["column"], cond["op"], cond["value"])
            if len(valid) < params["min_valid_factor"] * max(params["targets"]):
                raise ValueError(f"{cond}: only {len(valid)} rows hold; need "
                                 f"{params['min_valid_factor']} x the largest target")
            tasks += [self._task(cond, target, valid, params) for target in params["targets"]]
        if len({t.spec.task_id for t in tasks}) != len(tasks):
            raise ValueError("two conditions share a data set and column; task ids would collide")
        return tasks

    def _task(self, cond: dict[str, Any], target: int, valid: list[str], params: dict[str, Any]) -> BuiltTask:
        task_id = f"rows-{cond['dataset']}-{cond['column']}-n{target:03d}"
        budget = int(params["budgets"][target])
        steps = oracle_steps(valid, target, params["page_rows"], params["max_submit"])
        if steps > params["max_oracle_fraction"] * budget:
            raise ValueError(f"{task_id}: a perfect reader needs {steps} of the {budget} steps")
        settings = {key: cond[key] for key in ("dataset", "column", "op", "value")}
        settings.update(page_rows=params["page_rows"], max_submit=params["max_submit"])
        spec = TaskSpec(task_id=task_id, family="rows", repo=cond["dataset"],
                        predicate=f"{cond['column']} {cond['op']} {cond['value']}",
                        objective=OBJECTIVE.format(n=target, **settings), target=target, budget=budget,
                        tools=TOOLS, oracle_steps=steps, settings=settings)
        return BuiltTask(spec=spec, hidden={"task_id": task_id, "valid": valid})

    def episode_metrics(self, events: list[dict[str, Any]], task: TaskSpec) -> dict[str, Any]:
        """The family's own metrics (scoring hook): status calls."""
        from pushbench.scoring.items import tool_calls

        return {"status_calls": tool_calls(events, "status")}

    def environment(self, task: TaskSpec, snapshot_root: Path | None = None, hidden_root: Path | None = None,
                    sink: Any = None) -> Any:
        """A fresh episode (``snapshot_root`` is unused: the data ship with scikit-learn)."""
        from pushbench.tasks.rows.env import RowsEnv

        verifier = Verifier.for_item_set("rows", task.task_id, task.target, hidden_root, sink=sink)
        return RowsEnv(task, verifier)
