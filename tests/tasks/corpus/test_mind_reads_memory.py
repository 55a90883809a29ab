"""The corpus mind reads every memory's output where it sits (issue 30 item 4).

The scenario: the head clue's search (the one that finds candidates) ran early, unrelated searches
pushed it out of the recent history, and the next turn acts on it by opening one of its candidates
instead of searching again. Per memory (``memory_plant``) the candidates are only in that memory's
message: ACG's decision view and the LangGraph store quote or retrieve the search itself
(``EVIDENCE``); the rolling summary and memgpt's progress block hold the mind's own notes of it
(``NOTE``: a read note of the search, a pending note of its candidates, each with its document); an
archival passage holds the same notes, found by searching the archive with the head query
(``ARCHIVE``). Without the memory's message the same context never opens a candidate.
"""

from __future__ import annotations

import pytest

from memory_plant import EVIDENCE, MEMORIES, NOTE, Scenario, acting_rate, call_of, context
from pushbench.guidance import pending_note, read_note
from pushbench.tasks import get_family, load_tasks
from pushbench.tasks.corpus.notes import noted_item
from pushbench.tasks.corpus.reader import DOCSTRING_TITLE, HEAD_KINDS, base_title, clue_query, parse_clue
from pushbench.tools import ToolCall

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


def _head_search(task) -> tuple[str, list[tuple[str, str]]]:
    """The head clue's query and the (document, candidate) pairs its docstring hits give."""
    query = clue_query(parse_clue(task.settings["clues"][0]), None, None)
    text = get_family("corpus").environment(task).execute(
        ToolCall("search", {"query": query, "requirement": "clue:1"})).text
    found = []
    for line in text.splitlines():
        if line.startswith("[") and (m := DOCSTRING_TITLE.match(base_title(line.split(" | ", 1)[1]))):
            found.append((line.split(" | ")[0].split("] ")[1], m.group(1)))
    assert found, text
    return query, found


def notes_of(query: str, found: list[tuple[str, str]]) -> str:
    """The notes the mind writes of the head search: the search was read, its candidates are pending."""
    return "\n".join([read_note([(query, (1, 1))]), pending_note(noted_item(d, name, None) for d, name in found)])


def scenario(memory: str) -> Scenario:
    task = _task()
    env = get_family("corpus").environment(task)
    query, found = _head_search(task)
    docs = [d for d, _ in found]
    head = ("search", {"query": query, "requirement": "clue:1"})
    recent = [("search", {"query": q}) for q in FILLERS]
    acts = lambda turn: call_of(turn)[0] == "get_document" and call_of(turn)[1]["doc_id"] in docs  # noqa: E731
    if memory in EVIDENCE:
        return Scenario(env, fact=tuple(docs), early=[head], recent=recent, acts=acts)
    note = notes_of(query, found)
    if memory in NOTE:  # the summary condenses the head search into the note; memgpt's block holds it
        return Scenario(env, fact=note, note=note, early=[head] if memory == "summary" else [], recent=recent,
                        acts=acts)
    return Scenario(env, fact=note, note=note, search=query, recent=recent, acts=acts)


@pytest.mark.parametrize("memory", MEMORIES)
def test_the_mind_opens_a_candidate_only_the_memory_shows(memory: str) -> None:
    planted = scenario(memory)
    messages, tools, where = context(memory, planted)
    rate = acting_rate(messages, tools, planted.acts)
    assert rate > 0, f"{memory}: the mind never opened a candidate shown in message {where}"
    without = [m for i, m in enumerate(messages) if i != where]  # the same context without the memory's message
    assert acting_rate(without, tools, planted.acts) == 0
