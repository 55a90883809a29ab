"""ACG App. C diagnostics on hand-built event traces: each category, and the scored rows carrying them."""

from __future__ import annotations

import pytest

from pushbench.scoring import score_events, score_row
from pushbench.scoring.diagnostics import (TARGET, Continuation, Deliverable, RepetitionRule, continuation, delivered,
                                           diagnose, family_deliverable, repetition_period)
from pushbench.tasks.base import TaskSpec
from pushbench.tools.base import PreconditionError, ToolCall
from pushbench.verifier import Verifier

PRE = {"rejection": "precondition"}


def call(tool: str, args=None, ok: bool = True, info=None) -> dict:
    record = {"kind": "call", "tool": tool, "args": args if args is not None else {}, "ok": ok,
              "error": None if ok else "ERROR: bad"}
    return {**record, **({"info": info} if info else {})}


def end(reason: str) -> dict:
    return {"kind": "end", "reason": reason, "reported": None}


def numbered(events: list[dict]) -> list[dict]:
    return [{**e, "seq": i, "step": i + 1} for i, e in enumerate(events)]


def test_interface_and_precondition_rejections_come_from_explicit_responses():
    events = numbered([
        call("nope", "x", ok=False),  # unknown tool: interface
        call("submit", "{bad json", ok=False),  # bad arguments: interface
        call("add_to_cart", {"item": "a"}, ok=False, info=PRE),  # refused because of state
        call("search", ok=False, info={"tool_failure": "KeyError"}),  # the tool's bug: neither
        call("final", {"count": 1}, info={"intercepted_by": "gated"}),  # a controller's refusal: neither
        call("status"), end("final")])
    found = diagnose(events, 1, False, None)
    assert (found.interface_rejections, found.precondition_rejections) == (2, 1)
    assert not found.budget_exhausted


def test_precondition_error_is_logged_as_a_precondition_rejection():
    from pushbench.tasks import get_family, load_tasks

    task = load_tasks("reposcan")[0]
    env = get_family("reposcan").environment(task)

    def refuse(**_):
        raise PreconditionError("the cart is already checked out")
    env.tools["status"] = env.tools["status"].__class__("status", "", env.tools["status"].parameters, refuse)
    assert env.execute(ToolCall("status", "{}")).text.startswith("REJECTED:")
    env.execute(ToolCall("nope", "{}"))
    found = diagnose(env.verifier.events, task.target, False, None)
    assert (found.interface_rejections, found.precondition_rejections) == (1, 1)


def test_budget_exhaustion_needs_the_terminal_reason():
    assert diagnose(numbered([call("status"), end("budget")]), 1, False, None).budget_exhausted
    assert not diagnose(numbered([call("status"), end("give_up")]), 1, False, None).budget_exhausted
    assert not diagnose(numbered([call("status")]), 1, False, None).budget_exhausted  # no end record


@pytest.mark.parametrize("tools, period", [
    (["a", "a", "a"], 1),  # three identical calls in a row
    (["x", "a", "b", "a", "b", "a", "b", "y"], 2),  # a pattern of two, three times
    (["a", "b", "c", "a", "b", "c", "a", "b", "c"], 3),
    (["a", "a", "b", "a", "a"], None),  # twice is not repetition
    (["a", "b", "a", "b", "c", "a", "b"], None),  # the pattern is broken
    (["a", "b", "c", "d", "a", "b", "c", "d", "a", "b", "c", "d"], None),  # period 4 is not "short"
])
def test_repetition_consecutive_identical_calls_or_short_patterns(tools, period):
    calls = [call(t, {"q": t}) for t in tools]
    assert repetition_period(calls, RepetitionRule()) == period


def test_repetition_compares_arguments_and_reads_its_thresholds():
    calls = [call("search", {"query": "q", "page": p}) for p in (1, 2, 3)]
    assert repetition_period(calls, RepetitionRule()) is None  # same tool, new pages: progress
    same = [call("search", {"page": 1, "query": "q"}), call("search", {"query": "q", "page": 1})]
    assert repetition_period(same, RepetitionRule(min_repeats=2)) == 1  # key order does not matter
    assert RepetitionRule.from_params({"max_period": 2, "min_repeats": 4}) == RepetitionRule(2, 4)
    with pytest.raises(ValueError, match="min_repeats"):
        RepetitionRule.from_params({"min_repeats": 1})


def test_deliverable_presence_and_delivered_but_failed_per_family():
    submit = call("submit", {"ids": ["a"]})
    found = diagnose(numbered([call("search"), submit, end("final")]), 5, False, family_deliverable("reposcan"))
    assert found.deliverable_present and found.delivered_but_failed
    found = diagnose(numbered([call("search"), end("give_up")]), 5, False, family_deliverable("reposcan"))
    assert found.deliverable_present is False and found.delivered_but_failed is False
    assert diagnose(numbered([submit]), 1, True, family_deliverable("rows")).delivered_but_failed is False
    # an intercepted submit never reached the tool: nothing was handed over
    blocked = call("submit", {"ids": ["a"]}, info={"intercepted_by": "stateqgp"})
    assert diagnose(numbered([blocked]), 1, False, family_deliverable("reposcan")).deliverable_present is False
    assert diagnose(numbered([call("answer", {"text": "x"})]), 1, False, family_deliverable("corpus")).deliverable_present
    assert diagnose(numbered([submit]), 1, False, None).deliverable_present is None  # undeclared: not assessable


def test_work_unit_deliverable_is_n_submits_or_any_edit():
    swe = family_deliverable("swe")
    assert swe == Deliverable(("submit",), TARGET, or_any=("edit",))
    units = [call("submit", {"unit": u}) for u in ("U1", "U2")]
    assert not delivered(swe, units, 3) and delivered(swe, units, 2)
    assert delivered(swe, [call("edit", {"path": "f"})], 3)
    assert not delivered(swe, [call("edit", {"path": "f"}, ok=False)], 3)  # a refused edit changed nothing
    assert delivered(family_deliverable("dataops"), [call("answer", {"unit": "U1"})], 5)


def test_continuation_after_rejection_resumption_and_delay():
    assert continuation([call("status")]) == Continuation(False, None, None)
    resumed = [call("status"), call("x", ok=False), call("y", ok=False, info=PRE), call("status")]
    assert continuation(resumed) == Continuation(True, True, 2)
    # an intercepted call after the rejection is not accepted execution; the episode never resumed
    stuck = [call("x", ok=False), call("final", info={"intercepted_by": "gated"}), call("x", ok=False)]
    assert continuation(stuck) == Continuation(True, False, None)
    found = diagnose(numbered([call("x", ok=False), call("status"), end("final")]), 1, False, None)
    assert (found.rejection_episode, found.rejection_resumed, found.rejection_delay) == (True, True, 1)


def test_scored_rows_carry_the_diagnostics_and_token_totals():
    task = TaskSpec(task_id="t", family="reposcan", repo="requests", objective="o", target=1, budget=3,
                    tools=["search", "submit", "status", "final"], oracle_steps=2)
    verifier = Verifier("t", 1, lambda item: item == "a")
    verifier.record_call(1, "submit", {"ids": ["a"]}, True)
    verifier.judge(1, "a")
    verifier.end(1, "final", reported=1)
    row = score_row({"input_tokens": 120, "output_tokens": 8, "llm_calls": 3}, verifier.events, task)
    assert row["tokens"] == 128 and row["llm_calls"] == 3
    assert row["deliverable_present"] is True and row["delivered_but_failed"] is False
    assert {"interface_rejections", "precondition_rejections", "budget_exhausted", "repetition",
            "rejection_resumed", "rejection_delay"} <= set(score_events(verifier.events, task))


def test_every_registered_family_declares_its_deliverable() -> None:
    from pushbench.registry import FAMILIES
    assert all(family_deliverable(name) is not None for name in FAMILIES), FAMILIES.names()
