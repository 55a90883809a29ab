"""The rows family's requirements and origins (the item-set base's, with rows(page) as the read tool)."""

from __future__ import annotations

from pushbench.tasks.base import TaskSpec
from pushbench.tasks.rows.env import RowsEnv
from pushbench.tasks.rows.family import OBJECTIVE
from pushbench.verifier import Verifier


def make_env() -> RowsEnv:
    settings = {"dataset": "iris", "column": "sepal_length_cm", "op": ">", "value": 6.5, "page_rows": 20,
                "max_submit": 20}
    spec = TaskSpec(task_id="rows-iris-sepal_length_cm-n005", family="rows", objective=OBJECTIVE.format(n=5, **settings),
                    target=5, budget=12, tools=["rows", "submit", "status", "final"], oracle_steps=6,
                    settings=settings, repo="iris", predicate="sepal_length_cm > 6.5")
    return RowsEnv(spec, Verifier(spec.task_id, 5, lambda _: True))


def test_rows_requirements_name_the_condition() -> None:
    reqs = make_env().requirements()
    assert [r.id for r in reqs] == ["count", "distinct", "predicate"]
    assert reqs[0].text == "at least 5 rows accepted by the verifier"
    assert reqs[2].text == "Collect 5 distinct rows of the `iris` data set where column `sepal_length_cm` > 6.5."


def test_rows_origins() -> None:
    env = make_env()
    assert env.action_origins("rows", {"page": 3}) == ("predicate",)
    assert env.action_origins("submit", {"ids": ["r0001"]}) == ("count", "distinct", "predicate")
    assert env.action_origins("search", {"query": "x"}) == ()  # rows has no search tool
