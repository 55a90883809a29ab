"""SimLM's incremental reading: a rebuilt reading equals a fresh one, whatever the copy did.

``ContextReader`` copies, on a rewrite, every stretch of the previous reading it can (a mind that
declares ``parse_replayable``). These tests check the copy against a fresh plain reading of the
same messages: hand-made rewrites with a toy mind, then every rebuild of real episodes of every
replayable registered mind under each rewriting memory.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from pushbench import config
from pushbench.backends.native import run_native
from pushbench.controllers import make_controller
from pushbench.memory import make_memory
from pushbench.policies.sim import SimLM, get_profile
from pushbench.policies.sim.memory import ContextReader, Mind
from pushbench.registry import MINDS
from pushbench.tasks import get_family, load_tasks, manifest_path


def same_reading(a: ContextReader, b: ContextReader) -> None:
    """Two readings hold the same facts (keys by name: ids are labels), payloads, state and totals."""
    for column in ("kind", "offset", "step", "aux"):
        assert np.array_equal(a.facts.array(column), b.facts.array(column)), column
    assert [a.facts.names[k] for k in a.facts.array("key")] == [b.facts.names[k] for k in b.facts.array("key")]
    assert a.facts.payloads == b.facts.payloads
    assert a.state == b.state
    assert (a.total_tokens, a.assistant_turns, a.seen) == (b.total_tokens, b.assistant_turns, b.seen)


class Toy(Mind):
    """Counts words: a fact per word (aux: the running count of 'status' lines, kept in the state)."""

    parse_replayable = True
    parsed = 0

    def _parse(self, reader: ContextReader, message: dict[str, Any], offset: int, step: int) -> None:
        Toy.parsed += 1
        text = str(message.get("content") or "")
        if text.startswith("status"):
            reader.state["status"] = reader.state.get("status", 0) + 1
        for i, word in enumerate(text.split()):
            reader.facts.add(1, offset + i, step, word, reader.state.get("status", 0), payload=(word,))


class PlainToy(Toy):
    """The same parse, not declared replayable (the declaration is per class)."""


def turn(i: int, text: str) -> list[dict[str, Any]]:
    return [{"role": "assistant", "content": None,
             "tool_calls": [{"id": f"c{i}", "type": "function", "function": {"name": "look", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": text}]


def context(view: str, turns: range) -> list[dict[str, Any]]:
    head = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "count the words"},
            {"role": "user", "content": view}]
    return head + [m for i in turns for m in turn(i, f"status {i}" if i % 3 == 0 else f"word{i} and more{i}")]


def fresh(messages: list[dict[str, Any]], cls: type = PlainToy) -> ContextReader:
    mind = cls(get_profile("base"), 3)
    mind.reader.replayable = False
    mind.reader.update(messages, [])
    return mind.reader


def test_a_rewritten_view_copies_the_turns_after_it() -> None:
    mind = Toy(get_profile("base"), 3)
    assert mind.reader.replayable and not PlainToy(get_profile("base"), 3).reader.replayable
    for step in range(1, 12):
        view = " ".join(["status" if step % 4 == 0 else "view"] + [f"v{step}"] * step)  # changes every step
        messages = context(view, range(max(0, step - 6), step))  # the oldest turns trimmed too
        before = Toy.parsed
        mind.reader.update(messages, [])
        parsed = Toy.parsed - before
        same_reading(mind.reader, fresh(messages))
        if step > 1 and step % 4 and (step - 1) % 4 and step <= 6:  # same state after the view, no trim
            assert parsed == 3  # the view and the newest turn, not the whole context


def test_state_an_act_changed_is_dropped_by_a_rebuild_as_by_a_fresh_reading() -> None:
    mind = Toy(get_profile("base"), 3)
    first = context("view", range(0, 3))
    mind.reader.update(first, [])
    mind.reader.state["note"] = "act's own"  # a mind's note between two turns
    grown = first + turn(3, "status three") + turn(4, "w4")
    mind.reader.update(grown, [])
    assert mind.reader.state["note"] == "act's own"  # kept while the context only grows (a plain reading too)
    rewritten = context("view again", range(0, 5))
    rewritten[5:] = grown[5:]
    mind.reader.update(rewritten, [])
    assert "note" not in mind.reader.state
    same_reading(mind.reader, fresh(rewritten))


def test_an_unpicklable_state_turns_copying_off_and_reads_the_same() -> None:
    mind = Toy(get_profile("base"), 3)
    mind.reader.update(context("view", range(0, 3)), [])
    mind.reader.state["lock"] = lambda: None  # cannot be pickled
    grown = context("view", range(0, 4))
    mind.reader.update(grown, [])
    assert not mind.reader.replayable
    rewritten = context("other view", range(0, 4))
    mind.reader.update(rewritten, [])
    same_reading(mind.reader, fresh(rewritten))


# --- real episodes ---------------------------------------------------------------------------------
REPLAYABLE = [name for name in MINDS if MINDS.load(name).__dict__.get("parse_replayable", False)]
MEMORIES = ["acg", "memgpt", "summary", "langgraph-store", "full"]


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Every rebuild is compared with a fresh plain reading; counts rebuilds and messages copied."""
    counts = {"rebuilds": 0, "messages": 0, "parsed": 0}
    original, record = ContextReader._rebuilt, ContextReader._read_recorded
    parsed: list[int] = []  # messages parsed (not copied) by the rebuild under way

    def rebuilt(self: ContextReader, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> bool:
        parsed.clear()
        parsed.append(0)
        try:
            done = original(self, messages, tools)
        finally:
            n = parsed.pop()
        if done:
            mind = self._parse.__self__
            plain = type(mind)(mind.profile, mind.seed)
            plain.reader.replayable = False
            plain.reader.update(messages, tools)
            same_reading(self, plain.reader)
            counts["rebuilds"] += 1
            counts["messages"] += len(messages)
            counts["parsed"] += n
        return done

    def read_recorded(self: ContextReader, message: dict[str, Any], before: bytes) -> bytes:
        if parsed:
            parsed[-1] += 1
        return record(self, message, before)

    monkeypatch.setattr(ContextReader, "_rebuilt", rebuilt)
    monkeypatch.setattr(ContextReader, "_read_recorded", read_recorded)
    return counts


@pytest.mark.parametrize("family", REPLAYABLE)
@pytest.mark.parametrize("memory", MEMORIES)
def test_every_rebuild_of_real_episodes_equals_a_fresh_reading(family: str, memory: str, checked: dict[str, int],
                                                               tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not manifest_path(family).is_file() or not config.SNAPSHOT_SRC.is_dir():
        pytest.skip(f"no {family} manifest or snapshots; run `make repro`")
    if family in ("swe", "sweissues") and memory not in ("acg", "memgpt"):
        pytest.skip("jailed test runs are slow: two rewriting memories cover the SWE minds")
    monkeypatch.setenv("PUSHBENCH_SWE_TEST_CACHE", str(tmp_path / "cache"))
    tasks = sorted(load_tasks(family), key=lambda t: (t.budget, t.task_id))
    task = tasks[len(tasks) // 2]
    # full, summary and langgraph-store rewrite once the window fills: a small one (sim/pro tires least)
    model = "sim/base" if memory in ("acg", "memgpt") else "sim/pro@6k"
    env = get_family(family).environment(task)
    run_native(env, SimLM(model), make_controller("standard"), make_memory(memory), 5)
    assert checked["rebuilds"] > 0
    if memory in ("acg", "memgpt") and family not in ("swe", "sweissues"):
        assert checked["parsed"] < checked["messages"] / 2, checked  # the turns after the changed message copied
    # Not copied: langgraph-store slides its window every step, so each turn's step in the context
    # changes (a message's reading depends on its step); the SWE minds keep the test runs, searches
    # and reads they parse in reader.state, so a view quoting them changes the state the turns are
    # read from (as fact payloads they would not); full and summary cut rarely.
