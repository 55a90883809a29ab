"""Requirement views: only validated origin links qualify; unassigned evidence is never attached."""

from __future__ import annotations

from pushbench.memory.acg import ACGMemory
from pushbench.memory.acg.views import HISTORY_LIMIT
from pushbench.memory.base import Event
from pushbench.policies.base import tool_call_message
from pushbench.requirements import Requirement

REQS = [Requirement("unit:U01", "the version string of pytest in PKG-INFO", "unit"),
        Requirement("unit:U02", "the Requires-Python field of PKG-INFO", "unit")]


def feed(memory: ACGMemory, step: int, tool: str, text: str, reqs=None, **args) -> None:
    memory.ingest(Event(step, "action", tool_call_message(tool, args, f"c{step}")))
    origin = {"tool": tool, "arguments": args, "call_id": f"c{step}"}
    if reqs is not None:
        origin["requirements"] = reqs
    memory.ingest(Event(step, "observation", {"role": "tool", "tool_call_id": f"c{step}", "content": text}, origin))


def fresh(bind: bool = True) -> ACGMemory:
    memory = ACGMemory()
    memory.start("You are an agent.", "Fix the PKG-INFO of pytest: its version string and the Requires-Python field.")
    if bind:
        memory.bind_requirements(REQS)
    return memory


def test_similar_text_without_a_link_stays_unassigned() -> None:
    memory = fresh()
    feed(memory, 1, "inspect", "the version string of pytest in PKG-INFO is 8.3.3", unit="U01")  # no origin
    feed(memory, 2, "inspect", "the Requires-Python field of PKG-INFO: >=3.8", ["unit:U07", "U02"], unit="U02")
    feed(memory, 3, "inspect", "pytest version string 8.3.3 in PKG-INFO again", ["unit:U01"], unit="U01")
    feed(memory, 4, "status", "status: 0 units accepted (verified) of target 2")
    view = memory.decision_view()
    attached = {u for rv in view.requirements for u in rv.current + rv.history}
    texts = {memory.store.units[u].text for u in attached}
    assert texts == {"pytest version string 8.3.3 in PKG-INFO again"}
    assert view.requirements[0].history == [2]
    assert {memory.store.units[u].text for u in view.unassigned} >= {
        "the version string of pytest in PKG-INFO is 8.3.3", "the Requires-Python field of PKG-INFO: >=3.8"}


def test_history_is_capped_ranked_by_the_requirement_and_current_units_are_kept_apart() -> None:
    memory = fresh()
    for step in range(1, 16):
        words = "version string" if step % 2 else "unrelated words"
        feed(memory, step, "inspect", f"U01 page {step}: {words} {step}", ["unit:U01"], unit="U01", page=step)
    feed(memory, 16, "run_checker", "checker U01: FAIL", ["unit:U01"], unit="U01")
    rv = memory.decision_view().requirements[0]
    assert rv.current == [15]  # the checker result of this event
    assert 0 < len(rv.history) <= HISTORY_LIMIT and 15 not in rv.history
    top = [memory.store.units[u].text for u in rv.history[:3]]
    assert all("version string" in t for t in top)  # ranked by similarity to the requirement text


def test_without_requirements_everything_retrieved_is_unassigned() -> None:
    memory = fresh(bind=False)
    feed(memory, 1, "inspect", "the version string of pytest in PKG-INFO is 8.3.3", ["unit:U01"], unit="U01")
    feed(memory, 2, "status", "status: 0 units accepted (verified) of target 2")
    view = memory.decision_view()
    assert view.requirements == [] and view.unassigned == [0]
    messages = memory.render(32_000)
    assert messages[2]["content"].splitlines()[1] == "[memory] Associations with no requirement link (retrieved for " \
        "the task and the latest event; not evidence for any requirement):"
