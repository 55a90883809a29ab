"""The ``full`` context builder: the plain transcript, trimmed by whole turns to fit the window."""

from __future__ import annotations

import pytest

from pushbench.memory import MEMORIES, Event, make_memory
from pushbench.memory.full import TRIM_SLACK, FullContext
from pushbench.policies.base import text_message, tool_call_message
from pushbench.tokens import count_message_tokens

SYSTEM, TASK = "You are an agent.", "Find 10 things."


def turn(i: int, words: int = 40, replies: int = 1) -> list[Event]:
    events = [Event(i, "action", tool_call_message("search", {"query": f"q{i}", "page": 1}, f"c{i}"))]
    for r in range(replies):
        events.append(Event(i, "observation", {"role": "tool", "tool_call_id": f"c{i}",
                                               "content": f"result {i}.{r} " + "word " * words},
                            {"tool": "search", "call_id": f"c{i}"}))
    return events


def fill(memory: FullContext, turns: int, **kwargs) -> list[dict]:
    messages = []
    for i in range(turns):
        for event in turn(i, **kwargs):
            memory.ingest(event)
            messages.append(event.message)
    return messages


@pytest.fixture
def memory() -> FullContext:
    mem = make_memory("full")
    mem.start(SYSTEM, TASK)
    return mem


def test_registry() -> None:
    assert "full" in MEMORIES
    a, b = make_memory("full"), make_memory("full")
    assert isinstance(a, FullContext) and a is not b and a.name == "full"
    with pytest.raises(KeyError, match="unknown memory"):
        make_memory("graph")


def test_head_then_every_event_in_order(memory: FullContext) -> None:
    assert memory.render(10_000) == [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TASK}]
    messages = fill(memory, 5)
    view = memory.render(1_000_000)
    assert view[:2] == [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TASK}]
    assert view[2:] == messages


def test_fits_the_budget_by_dropping_whole_old_turns(memory: FullContext) -> None:
    messages = fill(memory, 40, replies=2)
    full = count_message_tokens(memory.render(10**9))
    budget = full // 3
    view = memory.render(budget)
    assert count_message_tokens(view) <= budget
    assert view[:2] == [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TASK}]
    kept = view[2:]
    assert kept[0]["role"] == "assistant"  # never starts with an orphaned tool reply
    assert kept == messages[len(messages) - len(kept):]  # a suffix of the transcript
    # slack: trimmed well below the limit so that the next few turns fit without trimming again
    assert count_message_tokens(view) <= budget - int(TRIM_SLACK * budget)


def test_prefix_stays_stable_between_trims(memory: FullContext) -> None:
    fill(memory, 30)
    one_turn = sum(count_message_tokens([e.message]) - 3 for e in turn(0))
    budget = count_message_tokens(memory.render(10**9)) // 2
    first = list(memory.render(budget))
    start = first[2]
    stable = 0
    for i in range(30, 60):
        for event in turn(i):
            memory.ingest(event)
        view = memory.render(budget)
        assert count_message_tokens(view) <= budget
        if view[2] is start:
            stable += 1
        else:
            break
    # about TRIM_SLACK * budget / one_turn turns fit before the next trim changes the prefix
    assert stable >= int(TRIM_SLACK * budget / one_turn) - 1 >= 1


def test_rendered_view_keeps_growing_without_trim(memory: FullContext) -> None:
    fill(memory, 3)
    view = memory.render(10**6)
    n = len(view)
    memory.ingest(Event(9, "action", text_message("stop")))
    assert len(memory.render(10**6)) == n + 1
    assert memory.render(10**6)[-1] == {"role": "assistant", "content": "stop"}


def test_a_turn_bigger_than_the_window_leaves_only_the_head(memory: FullContext) -> None:
    fill(memory, 2, words=2000)
    view = memory.render(500)
    assert view == [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TASK}]


def test_start_resets(memory: FullContext) -> None:
    fill(memory, 3)
    memory.start("other", "task two")
    assert memory.render(10**6) == [{"role": "system", "content": "other"}, {"role": "user", "content": "task two"}]


def _exact_trims(events: list[Event], budgets: list[int]) -> list[list[dict]]:
    """The views of an eager builder that counts every message exactly at ingest (the old way)."""
    head = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TASK}]
    room_of = {b: b - count_message_tokens(head) for b in budgets}
    messages: list[dict] = []
    first, views = 0, []
    for event, budget in zip(events, budgets):
        messages.append(event.message)
        shown = sum(count_message_tokens([m]) - 3 for m in messages[first:])
        if shown > room_of[budget]:
            goal = room_of[budget] - int(TRIM_SLACK * budget)
            while first < len(messages) and shown > goal:
                shown -= count_message_tokens([messages[first]]) - 3
                first += 1
                while first < len(messages) and messages[first].get("role") != "assistant":
                    shown -= count_message_tokens([messages[first]]) - 3
                    first += 1
        views.append(head + messages[first:])
    return views


def test_lazy_counting_trims_exactly_where_exact_counts_trim(memory: FullContext) -> None:
    # multi-byte text (several bytes per token) and plain words, at budgets around the point where
    # the byte bound first exceeds the room: the views must equal those of exact counting
    events = []
    for i in range(30):
        events += turn(i, words=5 + 7 * (i % 4))
        if i % 5 == 0:
            events.append(Event(i, "observation", {"role": "user", "content": "Grüße 東京 ∑ " * (i + 1)}))
    budgets = [150 + 13 * (k % 9) + k * 11 for k in range(len(events))]
    views = []
    for event, budget in zip(events, budgets):
        memory.ingest(event)
        views.append(list(memory.render(budget)))
    assert views == _exact_trims(events, budgets)
    assert any(len(v) < 2 + k + 1 for k, v in enumerate(views))  # trimming did happen
