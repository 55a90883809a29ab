"""DataOps-lite requirements (one per unit, with its checker) and the origins of unit tools."""

from __future__ import annotations

import pytest

from pushbench.tasks.base import TaskSpec
from pushbench.tasks.dataops.env import DataOpsEnv
from pushbench.verifier import Verifier

UNITS = [{"id": "U01", "kind": "csv_field", "title": "In iris.csv, what is row 6's petal length?"},
         {"id": "U02", "kind": "metadata_repair", "title": "Add Requires-Python to PKG-INFO."}]
TOOLS = ["list_units", "inspect", "answer", "edit", "run_checker", "submit", "status", "final"]


@pytest.fixture
def env():
    spec = TaskSpec(task_id="dataops-test", family="dataops", objective="Work through 2 units.", target=2,
                    budget=20, tools=TOOLS, oracle_steps=10, settings={"units": UNITS})
    made = DataOpsEnv(spec, Verifier(spec.task_id, 2, lambda _: False, retry_rejected=True),
                      {"U01": {"answer": "5.1"}, "U02": {"file": "PKG-INFO"}},
                      {"U01": {"iris.csv": "a,b\n1,2\n"}, "U02": {"PKG-INFO": "Name: x\n"}})
    yield made
    made.end("give_up")


def test_one_requirement_per_unit_with_its_checker(env) -> None:
    reqs = env.requirements()
    assert [(r.id, r.kind) for r in reqs] == [("unit:U01", "unit"), ("unit:U02", "unit")]
    assert reqs[0].text.startswith("U01 [csv_field] In iris.csv") and "run_checker(U01)" in reqs[0].text


@pytest.mark.parametrize("tool, arguments", [
    ("inspect", {"unit": "U02", "path": "PKG-INFO"}),
    ("answer", {"unit": "U02", "value": "3"}),
    ("edit", {"unit": "U02", "path": "PKG-INFO", "old": "a", "new": "b"}),
    ("run_checker", {"unit": "U02"}),
    ("submit", {"unit": "U02"}),
])
def test_a_unit_tool_naming_a_unit_serves_exactly_that_unit(env, tool, arguments) -> None:
    assert env.action_origins(tool, arguments) == ("unit:U02",)


@pytest.mark.parametrize("tool, arguments", [
    ("submit", {"unit": "U09"}),  # not in the backlog
    ("submit", {"unit": "unit:U09"}),
    ("submit", {"unit": ""}),
    ("submit", {"unit": 1}),  # wrong type: the call is refused, and serves nothing
    ("submit", "not an object"),
    ("list_units", {}),  # names no unit: unassigned, not every unit
    ("status", {}),
    ("final", {"count": 2}),
    ("run_tests", {"unit": "U01"}),  # not a tool of this family
])
def test_unknown_or_missing_units_stay_unassigned(env, tool, arguments) -> None:
    assert env.action_origins(tool, arguments) == ()


def test_the_requirement_argument_adds_validated_ids(env) -> None:
    assert env.action_origins("submit", {"unit": "U01", "requirement": ["unit:U02", "count"]}) == ("unit:U01", "unit:U02")
    assert env.action_origins("status", {"requirement": "U02"}) == ("unit:U02",)
