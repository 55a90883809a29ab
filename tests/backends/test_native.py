"""The native loop: feasibility with sim/perfect, bounded episodes, malformed calls, StateQGP dedupe."""

from __future__ import annotations

from typing import Any

import pytest

from agentkit import ScriptedPolicy, call_msg, make_env, raw_call, task
from pushbench.backends import get_backend
from pushbench.backends.native import SYSTEM_PROMPT, decode, run_native
from pushbench.controllers import make_controller
from pushbench.memory import make_memory
from pushbench.scoring import score_events
from pushbench.policies import make_policy
from pushbench.policies.base import text_message
from pushbench.tools.base import ToolCall

CONTROLLERS = ["standard", "gated", "stateqgp"]
FEASIBLE = ["reposcan-requests-fixture-n010", "reposcan-requests-calls-n025",
            "reposcan-requests-documented-n050", "reposcan-requests-fixture-n100"]


def episode(task_id: str, policy: Any, controller: str = "standard", seed: int = 0):
    env = make_env(task_id)
    run = run_native(env, policy, make_controller(controller), make_memory("full"), seed)
    return env, run, score_events(env.verifier.events, env.task)


def check_transcript(run) -> None:
    """Every observation answers the call right before it; the loop's counters match the transcript."""
    msgs = run.transcript
    assistants = [m for m in msgs if m["role"] == "assistant"]
    assert run.llm_calls == len(assistants)
    for i, m in enumerate(msgs):
        if m["role"] == "tool":
            prev = msgs[i - 1]
            assert prev["role"] == "assistant" and prev["tool_calls"][0]["id"] == m["tool_call_id"]
        elif m["role"] == "user":  # a blocked stop
            assert msgs[i - 1]["role"] == "assistant" and not msgs[i - 1].get("tool_calls")


def test_registry() -> None:
    assert get_backend("native") is run_native


@pytest.mark.parametrize("controller", CONTROLLERS)
@pytest.mark.parametrize("task_id", FEASIBLE)
def test_perfect_model_solves_real_tasks(task_id: str, controller: str) -> None:
    env, run, m = episode(task_id, make_policy("sim/perfect"), controller)
    spec = task(task_id)
    assert m["success"] and m["termination"] == "final"
    assert m["reported_count"] == m["valid_count"] >= spec.target
    assert m["duplicate_submissions"] == 0 and m["invalid_actions"] == 0 and m["repeated_searches"] == 0
    assert m["intercepted_actions"] == 0  # it never claims early, so nothing is blocked
    assert m["steps"] <= spec.budget
    check_transcript(run)


def test_the_policy_sees_the_system_prompt_and_objective() -> None:
    policy = ScriptedPolicy([call_msg("status")])
    env, run, _ = episode("reposcan-requests-fixture-n010", policy, "stateqgp")
    first = policy.seen[0]
    assert first[0]["role"] == "system" and first[0]["content"].startswith(SYSTEM_PROMPT)
    assert "[progress]" in first[0]["content"]  # the StateQGP note
    assert first[1] == {"role": "user", "content": env.task.objective}
    assert policy.seen[1][2:] == run.transcript[:2]  # then the transcript, as stored


@pytest.mark.parametrize("controller", CONTROLLERS)
def test_a_looping_policy_hits_the_budget(controller: str) -> None:
    looping = ScriptedPolicy([], then=call_msg("search", {"query": "test httpbin", "page": 1}))
    env, run, m = episode("reposcan-requests-fixture-n010", looping, controller)
    assert env.done and m["termination"] == "budget" and m["steps"] == env.task.budget
    assert run.llm_calls == env.task.budget
    assert "[The step budget of 30 tool calls is used up; the episode ends.]" in run.transcript[-1]["content"]


@pytest.mark.parametrize("controller", ["gated", "stateqgp"])
def test_a_policy_that_keeps_stopping_is_bounded_by_the_budget(controller: str) -> None:
    stopper = ScriptedPolicy([], then=text_message("done"))
    env, run, m = episode("reposcan-requests-fixture-n010", stopper, controller)
    assert m["termination"] == "budget" and m["steps"] == env.task.budget == run.llm_calls
    assert all("final blocked" in msg["content"] for msg in run.transcript if msg["role"] == "user")
    check_transcript(run)


def test_a_policy_that_keeps_claiming_is_bounded_by_the_budget() -> None:
    claimer = ScriptedPolicy([], then=call_msg("final", {"count": 99}))
    env, run, m = episode("reposcan-requests-fixture-n010", claimer, "gated")
    assert m["termination"] == "budget" and m["intercepted_actions"] == env.task.budget
    assert not m["false_completion"]


MALFORMED = [
    raw_call("search", '{"query": "test httpbin", "page": '),  # truncated JSON
    raw_call("search", "[1, 2]"),  # not an object
    raw_call("search", '{"query": "x", "page": "two"}'),  # schema violation
    raw_call("search", '{"q": "x"}'),  # missing required argument
    raw_call("teleport", "{}"),  # unknown tool
    raw_call("", "{}"),  # no name
    raw_call("submit", '{"ids": "tests/a.py::f"}'),  # wrong type
    raw_call("submit", '{"ids": ["../../etc/passwd"]}'),  # bad identifier
    raw_call("final", '{"count": -1}'),
    raw_call("search", "x" * 9000),  # too long
    {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "type": "function", "function": {}}]},
]


@pytest.mark.parametrize("controller", ["standard", "gated", "stateqgp", "stateqgp-dedupe", "stateqgp-pages"])
def test_malformed_calls_are_invalid_actions_not_crashes(controller: str) -> None:
    policy = ScriptedPolicy(MALFORMED, then=text_message("I stop."))
    env, run, m = episode("reposcan-requests-fixture-n010", policy, controller)
    calls = [e for e in env.verifier.events if e["kind"] == "call"]
    assert [c["step"] for c in calls[: len(MALFORMED)]] == list(range(1, len(MALFORMED) + 1))
    intercepted = [c for c in calls[: len(MALFORMED)] if (c.get("info") or {}).get("intercepted_by")]
    # final(-1) is blocked by the gate under gated/stateqgp rather than refused by the schema
    assert m["invalid_actions"] == len(MALFORMED) - len(intercepted)
    assert len(intercepted) == (0 if controller == "standard" else 1)
    for msg in run.transcript:
        if msg["role"] == "tool" and "final blocked" not in msg["content"]:
            assert msg["content"].startswith("ERROR: ")
    if controller == "standard":
        assert m["termination"] == "give_up" and env.steps == len(MALFORMED)
    else:  # the stop is blocked below target; the stub keeps stopping until the budget
        assert m["termination"] == "budget"
    assert m["valid_count"] == 0 and m["submissions"] == 0
    check_transcript(run)


def test_text_reply_gives_up_under_standard() -> None:
    env, run, m = episode("reposcan-requests-fixture-n010", ScriptedPolicy([text_message("bye")]))
    assert m["termination"] == "give_up" and m["steps"] == 0 and run.llm_calls == 1
    assert run.transcript == [{"role": "assistant", "content": "bye"}]


def test_empty_arguments_mean_no_arguments() -> None:
    policy = ScriptedPolicy([raw_call("status", ""), raw_call("status", "  ")])
    env, run, m = episode("reposcan-requests-fixture-n010", policy)
    assert m["invalid_actions"] == 0 and m["status_calls"] == 2


def test_decode() -> None:
    assert decode(ToolCall("s", '{"a": 1}', "i")) == ToolCall("s", {"a": 1}, "i")
    assert decode(ToolCall("s", "", "i")).arguments == {}
    bad = ToolCall("s", "{oops", "i")
    assert decode(bad) is bad
    listy = ToolCall("s", "[1]", "i")
    assert decode(listy) is listy
    parsed = ToolCall("s", {"a": 1})
    assert decode(parsed) is parsed


DEDUPE_GRID = ["reposcan-requests-fixture-n025", "reposcan-requests-fixture-n050", "reposcan-requests-calls-n050"]


def test_stateqgp_never_submits_a_duplicate() -> None:
    duplicates = {"standard": 0, "stateqgp": 0}
    for task_id in DEDUPE_GRID:
        for seed in (0, 1):
            for controller in duplicates:
                env, run, m = episode(task_id, make_policy("sim/mini"), controller, seed)
                duplicates[controller] += m["duplicate_submissions"]
                if controller == "stateqgp":
                    assert m["duplicate_submissions"] == 0, (task_id, seed)
                    items = [e["item"] for e in env.verifier.events if e["kind"] == "verdict"]
                    assert len(items) == len(set(items))
                    check_transcript(run)
    assert duplicates["standard"] > 0  # the grid does provoke duplicates without the controller


def test_episodes_are_deterministic() -> None:
    a = episode("reposcan-requests-fixture-n050", make_policy("sim/base"), "stateqgp", 4)
    b = episode("reposcan-requests-fixture-n050", make_policy("sim/base"), "stateqgp", 4)
    assert a[1].transcript == b[1].transcript and a[2] == b[2]
    assert a[0].verifier.events == b[0].verifier.events
