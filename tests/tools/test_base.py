"""The environment base: a tool handler's bug is a tool failure, recorded with its traceback."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pushbench.scoring.metrics import common_metrics
from pushbench.tools.base import RAISE_TOOL_ERRORS, Environment, Observation, ToolCall, ToolError, tool
from pushbench.verifier import Verifier


class BuggyEnv(Environment):
    @tool("Divide 1 by n.", n={"type": "integer"})
    def divide(self, n: int) -> Observation:
        if n < 0:
            raise ToolError("n must not be negative")
        return Observation(str(1 / n))


def env() -> BuggyEnv:
    task = SimpleNamespace(task_id="t", target=1, budget=10, settings={})
    return BuggyEnv(task, Verifier("t", 1, lambda _item: False))


def test_a_handler_exception_is_a_tool_failure_not_an_invalid_action(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(RAISE_TOOL_ERRORS, raising=False)
    e = env()
    bug = e.execute(ToolCall("divide", {"n": 0}))
    mistake = e.execute(ToolCall("divide", {"n": -1}))
    fine = e.execute(ToolCall("divide", {"n": 2}))
    assert not bug.ok and bug.text == "ERROR: the tool failed (ZeroDivisionError); the call had no effect."
    assert not mistake.ok and mistake.text == "ERROR: n must not be negative" and fine.text == "0.5"
    calls = [ev for ev in e.verifier.events if ev["kind"] == "call"]
    assert calls[0]["info"] == {"tool_failure": "ZeroDivisionError"} and "info" not in calls[1]
    metrics = common_metrics(e.verifier.events, 1, 10)
    assert (metrics["tool_failures"], metrics["invalid_actions"], metrics["steps"]) == (1, 1, 3)
    (failure,) = e.tool_failures
    assert failure["step"] == 1 and failure["tool"] == "divide"
    assert "ZeroDivisionError: division by zero" in failure["traceback"]
    assert '  File "/' not in failure["traceback"]  # no absolute paths in a trace
    assert 'File "test_base.py"' in failure["traceback"]  # outside the package: the file name only


def test_the_test_switch_re_raises_a_handler_bug(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(RAISE_TOOL_ERRORS, "1")
    with pytest.raises(ZeroDivisionError):
        env().execute(ToolCall("divide", {"n": 0}))
    assert env().execute(ToolCall("divide", {"n": -1})).text == "ERROR: n must not be negative"  # ToolError stays
