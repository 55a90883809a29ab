"""The planning mind reads every memory's output where it sits (issue 30 item 4).

Per memory a needed fact is planted in that memory's message only (``memory_plant``): the catalog
line of the navy Juniper water bottle the task asks for (req:1), found by an early search. The
mind acts on it when its next turn adds that product without searching for it again, at a rate
above zero over request seeds under ``sim/base``'s bounded recall; with another product's line in
the same place (the control) it never does. ACG's view and the store's retrieved items hold the
search result itself; the rolling summary quotes it (what the mind's summary writes); memgpt's
progress block and an archival passage hold it as the quoted line the mind notes there.
"""

from __future__ import annotations

from typing import Any, Callable

import pytest

from memory_plant import ARCHIVE, EVIDENCE, MEMORIES, Scenario, acting_rate, call_of, context
from pushbench.guidance import quoted
from pushbench.policies.base import Turn

TASK = "planning-002-shop-l2"  # req:1 a navy Juniper water bottle, req:2-3 two red 300 ml mugs, req:4 a budget
WANTED = {"catalog": "products", "category": "water bottle", "colour": "navy", "brand": "Juniper", "sort": "price_asc"}
CONTROL = {**WANTED, "category": "mug", "colour": "red", "brand": ""}
OTHER = ("backpack", "desk lamp", "jacket", "headphones", "watch", "sunglasses")  # not asked for
FILLERS = [("user_info", {}), ("coupons", {})] + [("search", {"catalog": "products", "category": c, "page": p})
                                                  for c in OTHER for p in (1, 2)]


@pytest.fixture(scope="module")
def make_env(tasks: list[Any]) -> Callable[[], Any]:
    """The task from the project's manifest (``conftest.tasks``)."""
    from pushbench.tasks import get_family

    task = next(t for t in tasks if t.task_id == TASK)
    return lambda: get_family("planning").environment(task)


def first_line(env: Any, query: dict[str, Any]) -> str:
    """The first product line of a search page (the cheapest, with WANTED's sort)."""
    from pushbench.tools.base import ToolCall

    lines = [ln for ln in env.execute(ToolCall("search", query)).text.splitlines() if ln.startswith("P")]
    assert lines, f"no product for {query}"
    return lines[0]


def adds(item: str) -> Callable[[Turn], bool]:
    return lambda turn: call_of(turn)[0] == "add" and call_of(turn)[1].get("item_id") == item


def scenario(make_env: Callable[[], Any], memory: str, control: bool = False) -> Scenario:
    item = first_line(make_env(), WANTED).split(" | ")[0]
    query = CONTROL if control else WANTED  # the control: a mug's line where the bottle's was
    line = first_line(make_env(), query)
    env = make_env()
    if memory in EVIDENCE:
        return Scenario(env, fact=line, early=[("search", query)], recent=FILLERS, acts=adds(item))
    note = quoted(line)
    if memory == "summary":
        return Scenario(env, fact=note, note=note, early=[("search", query)],
                        recent=FILLERS[:2], acts=adds(item))
    if memory in ARCHIVE:
        return Scenario(env, fact=note, note=note, search=" ".join(str(v) for k, v in sorted(query.items()) if k != "sort" and v), recent=FILLERS[:2],
                        acts=adds(item))
    return Scenario(env, fact=note, note=note, recent=FILLERS[:2], acts=adds(item))


@pytest.mark.parametrize("memory", MEMORIES)
def test_the_mind_acts_on_a_fact_only_the_memory_shows(make_env: Callable[[], Any], memory: str) -> None:
    planted = scenario(make_env, memory)
    messages, tools, where = context(memory, planted)
    rate = acting_rate(messages, tools, planted.acts)
    assert rate > 0, f"{memory}: the mind never acted on the bottle's line in message {where}"
    control = scenario(make_env, memory, control=True)
    messages, tools, _ = context(memory, control)
    assert acting_rate(messages, tools, planted.acts) == 0, f"{memory}: it added the bottle without its line"


def test_under_memory_pressure_it_notes_what_it_will_need(make_env: Callable[[], Any]) -> None:
    """Its own notes (``notes.py``), followed by sim/perfect: on memgpt's warning the progress block
    gets the user's line and the added bottle's line, the archive a passage of every item it recalls;
    before its next catalog search it searches the archive."""
    from memory_plant import Driver
    from pushbench.memory import make_memory
    from pushbench.memory.base import memory_tools
    from pushbench.policies.sim import SimLM

    env = make_env()
    memory = make_memory("memgpt")
    driver = Driver(memory, env)
    driver.call("user_info", {})
    bottle = first_line(make_env(), WANTED)
    driver.call("search", WANTED)
    driver.call("add", {"item_id": bottle.split(" | ")[0], "quantity": 1})
    tools = env.schemas() + memory_tools(memory)
    made = []
    for _ in range(3):
        messages = memory.render(int((memory.head_tokens() + memory.total) / 0.95))  # past 90%: the warning
        turn = SimLM("perfect").act(messages, tools, 1)
        name, args = call_of(turn)
        made.append((name, args))
        if name in ("core_memory_append", "archival_memory_insert", "archival_memory_search"):
            driver.memory_call(name, args)
    assert [name for name, _ in made] == ["core_memory_append", "archival_memory_insert", "archival_memory_search"]
    note, passage = made[0][1]["content"], made[1][1]["content"]
    assert note.startswith("| user ") and quoted(bottle) in note.splitlines()
    assert quoted(bottle) in passage.splitlines() and all(ln.startswith("| ") for ln in passage.splitlines())
    assert "mug" in made[2][1]["query"]  # the search it was about to run: the mugs (req:2)
