"""RepoScan's SimLM mind reads every memory's output where it sits (issue 30 item 4).

Per memory a needed fact is planted in that memory's message only (``memory_plant``) and the mind's
next turn must act on it for some request seeds: a valid hit from a page read early (ACG's view,
the store's retrieved items, both retrieving for the latest page, the query's next) is submitted; a note of pages read (the rolling summary, memgpt's
progress block) makes it search the next unread page; an archival passage saying an id was
submitted keeps that id out of the submit.
"""

from __future__ import annotations

import pytest

from agentkit import make_env
from memory_plant import ARCHIVE, EVIDENCE, MEMORIES, NOTE, Scenario, acting_rate, call_of, context
from pushbench.guidance import read_note, submitted_note
from pushbench.tasks.reposcan.reader import judge_hit, parse_objective

TASK = "reposcan-requests-fixture-n010"  # test functions taking the httpbin fixture
QUERY = "test httpbin"  # pages of valid hits
OTHER = "return the"  # pages of documented functions ("return a" too): no valid hit for this task


def valid_hits(env, query: str, page: int) -> list[str]:
    """The hits of a page the family reader takes for valid (what a noiseless SimLM would submit)."""
    goal = parse_objective(env.task.objective)
    return [h.uid for h in env.search_index.page(query, page).hits
            if judge_hit(goal, h.uid, h.snippet)]


def scenario(memory: str) -> Scenario:
    env = make_env(TASK)
    if memory in EVIDENCE:  # the latest page is the query's next one: the memory recalls its first
        early = valid_hits(env, QUERY, 1)
        fillers = [("search", {"query": q, "page": p}) for q in (OTHER, "return a") for p in (1, 2, 3)]
        return Scenario(env, fact=tuple(early), early=[("search", {"query": QUERY, "page": 1})],
                        recent=[*fillers, ("search", {"query": QUERY, "page": 2})],
                        acts=lambda turn: call_of(turn)[0] == "submit" and bool(set(call_of(turn)[1]["ids"]) & set(early)))
    pages = env.search_index.page(QUERY, 1).pages
    if memory in NOTE:
        note = read_note([(QUERY, (3, pages))])
        fillers = [("search", {"query": OTHER, "page": p}) for p in (1, 2, 3, 4)]  # what the summary condensed
        return Scenario(env, fact=note, note=note, early=fillers if memory == "summary" else [],
                        recent=[("search", {"query": QUERY, "page": 1})],
                        acts=lambda turn: call_of(turn) == ("search", {"query": QUERY, "page": 4}))
    done = valid_hits(env, QUERY, 1)[0]
    return Scenario(env, fact=submitted_note([done]), note=submitted_note([done]), search=done,
                    recent=[("search", {"query": QUERY, "page": p}) for p in (1, 2)],
                    acts=lambda turn: call_of(turn)[0] == "submit" and done not in call_of(turn)[1]["ids"])


@pytest.mark.parametrize("memory", MEMORIES)
def test_the_mind_acts_on_a_fact_only_the_memory_shows(memory: str) -> None:
    planted = scenario(memory)
    messages, tools, where = context(memory, planted)
    rate = acting_rate(messages, tools, planted.acts)
    assert rate > 0, f"{memory}: the mind never acted on the fact in message {where}"
    if memory in ARCHIVE:  # leaving the id out must come from the passage, not from forgetting the hit
        control = scenario(memory)
        control.note = control.fact = submitted_note(["tests/test_other.py::test_elsewhere"])
        messages, tools, _ = context(memory, control)
        assert rate > acting_rate(messages, tools, planted.acts) + 0.2
