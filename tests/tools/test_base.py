"""The environment base: a tool handler's bug is a tool failure, recorded with its traceback."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from pushbench.scoring.metrics import common_metrics
from pushbench.tools.base import (PRECONDITION, RAISE_TOOL_ERRORS, Environment, Observation, PreconditionError,
                                  ToolCall, ToolError, tool)
from pushbench.verifier import Verifier


class BuggyEnv(Environment):
    @tool("Divide 1 by n.", n={"type": "integer"})
    def divide(self, n: int) -> Observation:
        if n < 0:
            raise ToolError("n must not be negative")
        if n > 100:
            raise PreconditionError("n is larger than the stock of 100")
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


def test_a_precondition_rejection_is_marked_as_such_in_the_log() -> None:
    e = env()
    refused = e.execute(ToolCall("divide", {"n": 101}))
    mistake = e.execute(ToolCall("divide", {"n": -1}))
    assert not refused.ok and refused.text == "REJECTED: n is larger than the stock of 100"
    calls = [ev for ev in e.verifier.events if ev["kind"] == "call"]
    assert calls[0]["info"] == {"rejection": PRECONDITION} and "info" not in calls[1]
    assert common_metrics(e.verifier.events, 1, 10)["invalid_actions"] == 2


# --------------------------------------------------------------------------- unencodable text


class WriterEnv(Environment):
    """A tool that writes its argument: it must never run with text it cannot encode."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.written: list[bytes] = []

    @tool("Write text.", new={"type": "string"},
          meta={"type": "object", "default": {}},
          ids={"type": "array", "items": {"type": "string"}, "default": []})
    def write(self, new: str, meta: dict, ids: list) -> Observation:
        self.written.append(new.encode("utf-8"))
        return Observation("written")


def writer() -> WriterEnv:
    task = SimpleNamespace(task_id="t", target=1, budget=10, settings={})
    return WriterEnv(task, Verifier("t", 1, lambda _item: False))


@pytest.mark.parametrize(("arguments", "where"), [
    ('{"new": "\\ud800"}', "argument new "),  # valid JSON, a lone high surrogate
    ('{"new": "ok \\udfff tail"}', "argument new "),  # a lone low surrogate inside text
    ({"new": "\ud800"}, "argument new "),  # already parsed (as an SDK hands it over)
    ('{"new": "x", "ids": ["a", "\\ud83d"]}', "argument ids[1] "),  # half of a surrogate pair
    ({"new": "x", "meta": {"deep": ["ok", {"k": "\udc80"}]}}, "argument meta.deep[1].k "),
    ({"new": "x", "meta": {"\ud800": 1}}, "(the key)"),
])
def test_unencodable_text_is_an_invalid_action_before_the_handler(arguments, where: str) -> None:
    e = writer()
    obs = e.execute(ToolCall("write", arguments))
    assert not obs.ok and obs.text.startswith("ERROR: argument ") and where in obs.text
    assert "cannot be encoded as UTF-8" in obs.text
    obs.text.encode("utf-8")  # the observation itself is valid text
    assert e.written == []  # the handler never ran
    (call,) = [ev for ev in e.verifier.events if ev["kind"] == "call"]
    assert call["ok"] is False
    json.dumps(call, ensure_ascii=False).encode("utf-8")  # the event log holds no unencodable text
    assert common_metrics(e.verifier.events, 1, 10)["invalid_actions"] == 1


def test_a_valid_surrogate_pair_is_fine() -> None:
    e = writer()
    obs = e.execute(ToolCall("write", '{"new": "\\ud83d\\ude00"}'))  # one emoji, written as a JSON pair
    assert obs.ok and e.written == ["\U0001F600".encode("utf-8")]


def test_an_unencodable_tool_name_is_refused_and_logged_safely() -> None:
    e = writer()
    obs = e.execute(ToolCall("wr\ud800ite", "{}"))
    assert not obs.ok and "unknown tool 'wr\\ud800ite'" in obs.text
    obs.text.encode("utf-8")
    json.dumps(e.verifier.events, ensure_ascii=False).encode("utf-8")
