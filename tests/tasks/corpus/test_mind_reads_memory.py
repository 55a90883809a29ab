"""The corpus mind reads the memories that show earlier results again (issue 30 item 4, in part).

ACG's decision view quotes earlier search results and the LangGraph store retrieves them; the
mind reads a quoted or retrieved search as the search it shows (``memory_plant``'s ``EVIDENCE``
shape): the head clue's search is run early, unrelated searches push it out of the recent history,
and the next turn opens one of its docstring hits (a candidate) instead of searching again. Without
the memory the same context never does. Not done: the corpus mind writes no memory notes of its
own (a summary or memgpt's progress block holds "I recall nothing specific"), so ``summary`` and
memgpt's core and archival memory cannot carry a corpus fact yet (``test_minds_read_memory.PENDING``).
"""

from __future__ import annotations

import pytest

from memory_plant import EVIDENCE, Scenario, acting_rate, call_of, context
from pushbench.tasks import get_family, load_tasks
from pushbench.tasks.corpus.reader import DOCSTRING_TITLE, HEAD_KINDS, base_title, clue_query, parse_clue

FILLERS = [f"{topic} changelog" for topic in (
    "fixed a bug", "deprecated option removed", "documentation typo", "python version support dropped",
    "release notes warning", "regression fixed release", "improved error message", "internal refactor",
    "compatibility fix", "new option added", "performance improvement", "packaging metadata", "windows path fix",
    "unicode handling", "encoding default", "timeout behaviour", "plugin hook added", "test suite cleanup",
    "security fix", "type hints added")]  # unrelated searches: changelog items, no docstring candidates


def _task():
    """The first API question with a head clue and no module clue (its first move is the head search)."""
    for task in load_tasks("corpus"):
        kinds = task.settings["clue_kinds"]
        if task.settings["entity"] == "api" and kinds[0] in HEAD_KINDS and "module" not in kinds:
            return task
    raise AssertionError("no such corpus question")


def scenario(memory: str) -> Scenario:
    task = _task()
    env = get_family("corpus").environment(task)
    head = parse_clue(task.settings["clues"][0])
    query = clue_query(head, None, None)
    probe = get_family("corpus").environment(task)
    from pushbench.tools import ToolCall

    text = probe.execute(ToolCall("search", {"query": query, "requirement": "clue:1"})).text
    found = [line.split(" | ")[0].split("] ")[1] for line in text.splitlines()
             if line.startswith("[") and DOCSTRING_TITLE.match(base_title(line.split(" | ", 1)[1]))]
    assert found, text
    return Scenario(env, fact=tuple(found), early=[("search", {"query": query, "requirement": "clue:1"})],
                    recent=[("search", {"query": q}) for q in FILLERS],
                    acts=lambda turn: call_of(turn)[0] == "get_document" and call_of(turn)[1]["doc_id"] in found)


@pytest.mark.parametrize("memory", EVIDENCE)
def test_the_mind_opens_a_candidate_only_the_memory_shows(memory: str) -> None:
    planted = scenario(memory)
    messages, tools, where = context(memory, planted)
    rate = acting_rate(messages, tools, planted.acts)
    assert rate > 0, f"{memory}: the mind never opened a candidate shown in message {where}"
    without = [m for i, m in enumerate(messages) if i != where]  # the same context without the memory's message
    assert acting_rate(without, tools, planted.acts) == 0
