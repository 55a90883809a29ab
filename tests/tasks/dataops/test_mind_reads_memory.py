"""DataOps-lite's SimLM mind reads every memory's output where it sits (issue 30 item 4).

Per memory a needed fact is planted in that memory's message only (``memory_plant``) and the mind's
next turn must act on it for some request seeds: a page inspected early (ACG's view, the store's
retrieved items, both retrieving for the file's next page, read last) answers its unit without
inspecting again; a note of a pending unit (the rolling
summary, memgpt's progress block) is worked on with no listing in view; an archival passage saying
a unit was submitted keeps it from being submitted again.
"""

from __future__ import annotations

import pytest

from dataops_kit import dataops_data, dataops_env, dataops_tasks  # noqa: F401
from memory_plant import ARCHIVE, EVIDENCE, MEMORIES, NOTE, Scenario, acting_rate, call_of, context
from pushbench.guidance import pending_note, submitted_note

TASK = "dataops-n03-b1"  # U01 consistency, U02 metadata repair, U03 CSV field (iris.csv, row 6)
PAGE = ("inspect", {"unit": "U03", "path": "iris.csv", "page": 1})  # shows the answer's row
ROW = "row 6: 5.4,3.9,1.7,0.4,0"
FILLERS = [("inspect", {"unit": u, "path": p, "page": n}) for u, p, n in
           (("U01", "PKG-INFO", 1), ("U01", "PKG-INFO", 2), ("U02", "pyproject.toml", 1), ("U02", "pyproject.toml", 2),
            ("U02", "PKG-INFO", 1), ("U02", "PKG-INFO", 2), ("U01", "src/_pytest/_version.py", 1))]


def scenario(make_env, memory: str) -> Scenario:
    env = make_env(TASK)
    if memory in EVIDENCE:  # its latest call reads the file's next page: the memory recalls the first
        return Scenario(env, fact=ROW, early=[("list_units", {}), PAGE], window=5_000,  # its pages are short
                        recent=[*FILLERS, ("list_units", {}), ("inspect", {**PAGE[1], "page": 2})],
                        acts=lambda turn: call_of(turn)[0] == "answer" and call_of(turn)[1].get("unit") == "U03")
    if memory in NOTE:  # the listing is gone: only the note names the unit
        note = pending_note(["U03"])
        return Scenario(env, fact=note, note=note, early=[("list_units", {}), *FILLERS[:2]] if memory == "summary" else [],
                        acts=lambda turn: call_of(turn)[1].get("unit") == "U03")
    note = submitted_note(["U03"])  # it would submit U03 now (checked, passed); the passage says it was
    return Scenario(env, fact=note, note=note, search=note,
                    recent=[("list_units", {}), PAGE, ("answer", {"unit": "U03", "value": "1.7"}),
                            ("run_checker", {"unit": "U03"})],
                    acts=lambda turn: turn.call is not None and call_of(turn) != ("submit", {"unit": "U03"}))


@pytest.mark.parametrize("memory", MEMORIES)
def test_the_mind_acts_on_a_fact_only_the_memory_shows(dataops_env, memory: str) -> None:
    planted = scenario(dataops_env, memory)
    messages, tools, where = context(memory, planted)
    rate = acting_rate(messages, tools, planted.acts)
    assert rate > 0, f"{memory}: the mind never acted on the fact in message {where}"
    if memory in ARCHIVE:  # leaving U03 alone must come from the passage
        control = scenario(dataops_env, memory)
        control.note = control.fact = submitted_note(["U01"])
        messages, tools, _ = context(memory, control)
        assert rate > acting_rate(messages, tools, planted.acts) + 0.2
