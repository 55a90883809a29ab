"""Both backends put the validated requirement ids of each call into its
observation event and hand the task's requirements to the memory; a resumed LangGraph episode
rebuilds the memory from the same events."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentkit import call_msg, raw_call
from pushbench.backends.langgraph import run_langgraph
from pushbench.backends.native import run_native
from pushbench.controllers import make_controller
from pushbench.memory.base import Event, bind_requirements
from pushbench.memory.full import FullContext
from pushbench.policies.base import Turn, text_message, turn_from_message

SCRIPT = [
    call_msg("search", {"query": "test db", "page": 1}, "c0"),
    call_msg("submit", {"ids": ["tests/test_api.py::test_get"]}, "c1"),
    raw_call("submit", '{"ids": [', "c2"),  # bad JSON: an invalid action serving nothing
    call_msg("status", {"requirement": ["distinct", "nonsense"]}, "c3"),
    call_msg("no_such_tool", {"requirement": "count"}, "c4"),
    call_msg("search", {"query": "fixture"}, "c5"),
    call_msg("submit", {"ids": ["tests/test_api.py::test_get"]}, "c6"),
    call_msg("final", {"count": 1}, "c7"),
]
EXPECTED = [["predicate"], ["count", "distinct", "predicate"], [], ["count", "distinct"], [], ["predicate"],
            ["count", "distinct", "predicate"], ["count"]]


class RecordingMemory(FullContext):
    """``full`` that records the events it receives and the requirements it is bound to."""

    def start(self, system: str, task: str) -> None:
        super().start(system, task)
        self.events: list[Event] = []
        self.bound: list[list[Any]] = []

    def bind_requirements(self, requirements: list[Any]) -> None:
        self.bound.append(requirements)

    def ingest(self, event: Event) -> None:
        self.events.append(event)
        super().ingest(event)


class IndexedPolicy:
    """Answers with SCRIPT[number of turns already in view] (so a resumed run picks up where it was);
    dies on its ``crash_at``-th call."""

    name, context_window = "stub/indexed", 1_000_000

    def __init__(self, crash_at: int | None = None):
        self.calls, self.crash_at = 0, crash_at

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], seed: int) -> Turn:
        self.calls += 1
        if self.calls == self.crash_at:
            raise RuntimeError("killed")
        done = sum(m.get("role") == "assistant" for m in messages)
        return turn_from_message(SCRIPT[done] if done < len(SCRIPT) else text_message("done"), 1, 1)


def observed(memory: RecordingMemory) -> list[list[str]]:
    return [e.origin["requirements"] for e in memory.events if e.kind == "observation"]


def check(memory: RecordingMemory, env: Any) -> None:
    assert observed(memory) == EXPECTED
    assert memory.bound == [env.requirements()] and [r.id for r in memory.bound[0]] == ["count", "distinct", "predicate"]
    tools = [e.origin.get("tool") for e in memory.events if e.kind == "observation"]
    assert tools == [json.loads(json.dumps(m))["tool_calls"][0]["function"]["name"] for m in SCRIPT]


def test_native_observation_events_carry_origins(make_fixture_env) -> None:
    env, memory = make_fixture_env(), RecordingMemory()
    run_native(env, IndexedPolicy(), make_controller("standard"), memory, 0)
    check(memory, env)


def test_a_refused_call_carries_its_origins_too(make_fixture_env) -> None:
    """stateqgp intercepts the repeated submit and the early final; their observations still name
    what the calls serve (the blocked text replies after them serve nothing)."""
    env, memory = make_fixture_env(), RecordingMemory()
    run_native(env, IndexedPolicy(), make_controller("stateqgp"), memory, 0)
    intercepted = [e["step"] for e in env.verifier.events if (e.get("info") or {}).get("intercepted_by")]
    assert 7 in intercepted and 8 in intercepted  # the repeated submit, the early final
    assert observed(memory)[:8] == EXPECTED and set(map(tuple, observed(memory)[8:])) == {()}


def test_a_text_reply_the_controller_blocks_serves_nothing(make_fixture_env) -> None:
    class Stopper(IndexedPolicy):
        def act(self, messages, tools, seed):
            done = sum(m.get("role") == "assistant" for m in messages)
            return turn_from_message(text_message("I am done") if done == 0 else call_msg("final", {"count": 0}))

    env, memory = make_fixture_env(), RecordingMemory()
    run_native(env, Stopper(), make_controller("gated"), memory, 0)
    first = next(e for e in memory.events if e.kind == "observation")
    assert first.message["role"] == "user" and first.origin["requirements"] == []


def test_langgraph_observation_events_carry_origins(make_fixture_env, tmp_path: Path) -> None:
    env, memory = make_fixture_env(), RecordingMemory()
    run_langgraph(env, IndexedPolicy(), make_controller("standard"), memory, 0, checkpoint=tmp_path / "c.sqlite")
    check(memory, env)


@pytest.mark.parametrize("crash_at", [3, 6])
def test_a_resumed_langgraph_episode_rebuilds_the_memory_from_the_same_events(make_fixture_env, tmp_path: Path,
                                                                            crash_at: int) -> None:
    reference_env, reference = make_fixture_env(), RecordingMemory()
    run_native(reference_env, IndexedPolicy(), make_controller("standard"), reference, 0)
    db = tmp_path / "c.sqlite"
    with pytest.raises(RuntimeError, match="killed"):
        run_langgraph(make_fixture_env(), IndexedPolicy(crash_at), make_controller("standard"), RecordingMemory(), 0,
                      checkpoint=db, thread_id="ep")
    env, memory = make_fixture_env(), RecordingMemory()
    run_langgraph(env, IndexedPolicy(), make_controller("standard"), memory, 0, checkpoint=db, thread_id="ep")
    check(memory, env)
    as_data = lambda m: [(e.step, e.kind, e.message, e.origin) for e in m.events]  # noqa: E731
    assert as_data(memory) == as_data(reference)


def test_unit_tools_name_their_unit_in_the_event(tmp_path: Path) -> None:
    from pushbench.tasks.base import TaskSpec
    from pushbench.tasks.dataops.env import DataOpsEnv
    from pushbench.verifier import Verifier

    units = [{"id": "U01", "kind": "csv_field", "title": "t1"}, {"id": "U02", "kind": "csv_field", "title": "t2"}]
    spec = TaskSpec(task_id="d", family="dataops", objective="o", target=2, budget=10, oracle_steps=5,
                    tools=["list_units", "inspect", "answer", "edit", "run_checker", "submit", "status", "final"],
                    settings={"units": units})
    env = DataOpsEnv(spec, Verifier("d", 2, lambda _: False, retry_rejected=True),
                     {"U01": {"expected": "1"}, "U02": {"expected": "2"}}, {"U01": {"a.csv": "x\n1\n"}, "U02": {"a.csv": "x\n2\n"}})
    script = [call_msg("list_units", {}, "a"), call_msg("answer", {"unit": "U02", "value": "2"}, "b"),
              call_msg("run_checker", {"unit": "U02"}, "c"), call_msg("submit", {"unit": "U09"}, "d"),
              call_msg("final", {"count": 1}, "e")]

    class Script(IndexedPolicy):
        def act(self, messages, tools, seed):
            done = sum(m.get("role") == "assistant" for m in messages)
            return turn_from_message(script[done])

    memory = RecordingMemory()
    run_native(env, Script(), make_controller("standard"), memory, 0)
    assert observed(memory) == [[], ["unit:U02"], ["unit:U02"], [], []]
    assert [r.id for r in memory.bound[0]] == ["unit:U01", "unit:U02"]


def test_bind_requirements_is_optional() -> None:
    bind_requirements(FullContext(), [])  # a builder without the hook: nothing happens, no error
