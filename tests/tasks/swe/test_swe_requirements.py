"""SWE-lite requirements and origins: only a call that names a unit serves it."""

from __future__ import annotations

import pytest

from pushbench.tasks.swe.env import SweEnv
from pushbench.tasks.swe.runs import Workspace
from pushbench.verifier import Verifier

from swe_toy import CLAMP_FAULT, ENV_UNIT, toy_spec, write_toy


@pytest.fixture
def env(tmp_path):
    spec = toy_spec(units=2)
    ws = Workspace("toy", write_toy(tmp_path / "snaps"))
    made = SweEnv(spec, Verifier(spec.task_id, spec.target, lambda _: False, retry_rejected=True), ws,
                  {"U01": CLAMP_FAULT, "U02": ENV_UNIT})
    yield made
    ws.close()


def test_each_unit_is_a_requirement_checked_by_its_tests(env) -> None:
    reqs = env.requirements()
    assert [r.id for r in reqs] == ["unit:U01", "unit:U02"]
    assert all(r.kind == "unit" for r in reqs) and "run_tests(U02)" in reqs[1].text


@pytest.mark.parametrize("tool, arguments, expected", [
    ("run_tests", {"unit": "U01"}, ("unit:U01",)),
    ("submit", {"unit": "U02"}, ("unit:U02",)),
    ("read_file", {"path": "src/toy/mathx.py", "unit": "U02"}, ("unit:U02",)),
    ("edit", {"path": "src/toy/mathx.py", "old": "a", "new": "b", "unit": "U01"}, ("unit:U01",)),
    ("edit", {"path": "src/toy/mathx.py", "old": "a", "new": "b"}, ()),  # names no unit
    ("read_file", {"path": "src/toy/mathx.py", "unit": ""}, ()),
    ("search_files", {"query": "U01"}, ()),  # a query mentioning a unit is text, not an origin
    ("run_tests", {"unit": "U07"}, ()),
])
def test_swe_origins(env, tool, arguments, expected) -> None:
    assert env.action_origins(tool, arguments) == expected


def test_an_edit_after_naming_a_unit_is_still_unassigned(env) -> None:
    """The environment attributes an unnamed edit to the unit last named; the origin comes from the
    call alone, so it is not."""
    from pushbench.tools import ToolCall

    env.execute(ToolCall("read_file", {"path": "src/toy/mathx.py", "unit": "U01"}))
    assert env.current == "U01"
    assert env.action_origins("edit", {"path": "src/toy/mathx.py", "old": "x", "new": "y"}) == ()
