"""SWE-lite's SimLM mind reads every memory's output where it sits (issue 30 item 4).

Per memory a needed fact is planted in that memory's message only (``memory_plant``) and the mind's
next turn must act on it for some request seeds, on the toy snapshot (one unit: ``clamp``'s flipped
comparison): a failing test run seen early (ACG's view, the store's retrieved items) sends it to
the suspect's definition instead of running the tests again; a note of a pending unit (the rolling
summary, memgpt's progress block) is worked on with no listing in view; an archival passage saying
the unit was submitted keeps it from being submitted again after its passing run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_plant import ARCHIVE, EVIDENCE, MEMORIES, NOTE, Scenario, acting_rate, call_of, context
from pushbench.guidance import pending_note, submitted_note
from swe_toy import clamp_env, write_toy

WHERE = "E    +  where 0 = clamp(5, 0, 10)"  # a line of the failing run only
FIX = {"path": "src/toy/mathx.py", "old": '    """Limit value to [low, high]."""\n    if value >= low:',
       "new": '    """Limit value to [low, high]."""\n    if value < low:', "unit": "U01"}


@pytest.fixture
def make_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PUSHBENCH_SWE_TEST_CACHE", str(tmp_path / "cache"))
    snapshots = write_toy(tmp_path / "snaps")
    made = []

    def make():
        made.append(clamp_env(snapshots))
        return made[-1]

    yield make
    for env in made:
        env.end("test-cleanup")


def scenario(make, memory: str) -> Scenario:
    env = make()
    if memory in EVIDENCE:  # the toy's results are short: a small window leaves the run out of the turns
        return Scenario(env, fact=WHERE, early=[("list_units", {}), ("run_tests", {"unit": "U01"})],
                        window={"acg": 1_200, "langgraph-store": 2_000}[memory],
                        recent=[*[("read_file", {"path": "tests/test_mathx.py", "start": 1, "end": 40})] * 5, ("list_units", {})],
                        acts=lambda turn: call_of(turn)[0] == "search_files")
    if memory in NOTE:  # the listing is gone: only the note names the unit
        note = pending_note(["U01"])
        return Scenario(env, fact=note, note=note, early=[("list_units", {}), ("status", {})] if memory == "summary" else [],
                        acts=lambda turn: call_of(turn)[1].get("unit") == "U01")
    note = submitted_note(["U01"])  # it would submit U01 now (edited, passed); the passage says it was
    return Scenario(env, fact=note, note=note, search=note,
                    recent=[("list_units", {}), ("run_tests", {"unit": "U01"}), ("edit", FIX), ("run_tests", {"unit": "U01"})],
                    acts=lambda turn: turn.call is not None and call_of(turn) != ("submit", {"unit": "U01"}))


@pytest.mark.parametrize("memory", MEMORIES)
def test_the_mind_acts_on_a_fact_only_the_memory_shows(make_env, memory: str) -> None:
    planted = scenario(make_env, memory)
    messages, tools, where = context(memory, planted)
    rate = acting_rate(messages, tools, planted.acts)
    assert rate > 0, f"{memory}: the mind never acted on the fact in message {where}"
    if memory in ARCHIVE:  # leaving U01 alone must come from the passage
        control = scenario(make_env, memory)
        control.note = control.fact = submitted_note(["U02"])
        messages, tools, _ = context(memory, control)
        assert rate > acting_rate(messages, tools, planted.acts) + 0.2
