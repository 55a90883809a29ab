"""The issues mind reads every memory's output where the memory puts it (issue 30, item 4).

For each memory a needed fact is planted only in that memory's own message, built by the memory's
real code: the traceback of an earlier test run (which names ``Response.iter_content`` in
``src/requests/models.py``), or for MemGPT's core memory the note that an issue was accepted. The
recent history no longer holds the fact. The mind acts on it (searches for the function the
traceback named, or moves to the other issue) at a rate above zero over seeds under ``sim/base``'s
bounded recall; without the memory's message it never does. No test runs, no workspace: only messages.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from pushbench.backends.native import SYSTEM_PROMPT
from pushbench.memory.acg import ACGMemory
from pushbench.memory.base import Event
from pushbench.memory.langgraph_store import LangGraphStoreMemory
from pushbench.memory.memgpt import MemGPTMemory
from pushbench.memory.summary import SummaryMemory, SummarySettings
from pushbench.policies.sim import SimLM
from pushbench.requirements import Requirement
from pushbench.tasks.sweissues.family import OBJECTIVE, TOOLS
from pushbench.tasks.sweissues.long import OBJECTIVE as LONG_OBJECTIVE
from pushbench.tools.base import ToolCall

SEEDS = range(24)
TASK = OBJECTIVE.format(repo="requests", issue="I01")
LISTING = ("backlog: 1 units (target 1 passed)\nI01 [exception] Bug report for `requests`: "
           "`tests/test_requests.py::TestRequests::test_response_chunk_size_type` fails: TypeError: chunk_size "
           "must be an int, it is instead a <class 'NoneType'>.")
RUN = """checker I01: FAIL
the issue's tests fail
F                                                                        [100%]
=================================== FAILURES ===================================
__________________ TestRequests.test_response_chunk_size_type __________________
tests/test_requests.py:1453: in test_response_chunk_size_type
    chunks = r.iter_content(None)
src/requests/models.py:842: in iter_content
    raise TypeError(
E   TypeError: chunk_size must be an int, it is instead a <class 'NoneType'>.
=========================== short test summary info ============================
FAILED tests/test_requests.py::TestRequests::test_response_chunk_size_type - ...
1 failed"""
ACTED = ("search_files", {"query": "def iter_content("})  # acting on the traceback's frame
FILLER = "src/requests/api.py lines 1-40 of 157\n" + "\n".join(f"{n:5d}| # line {n} of the module docstring"
                                                               for n in range(1, 41))


def schemas(names: list[str]) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": n, "parameters": {"type": "object", "properties": {}}}}
            for n in names]


def call(name: str, args: dict[str, Any], step: int) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": [{"id": f"call_{step}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(args, sort_keys=True)}}]}


def result(text: str, step: int) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": f"call_{step}", "content": text}


def episode() -> list[tuple[Event, Event]]:
    """list_units, run_tests (the fact), then reads of an unrelated module (the recent history)."""
    turns = [("list_units", {}, LISTING, []), ("run_tests", {"unit": "I01"}, RUN, ["hunk:1"])]
    turns += [("read_file", {"path": "src/requests/api.py", "start": 1, "end": 40}, FILLER, [])] * 3
    out = []
    for step, (name, args, text, reqs) in enumerate(turns, 1):
        out.append((Event(step, "action", call(name, args, step)),
                    Event(step, "observation", result(text, step),
                          {"tool": name, "arguments": args, "call_id": f"call_{step}", "requirements": reqs})))
    return out


def feed(memory: Any, budget: int) -> list[dict[str, Any]]:
    memory.start(SYSTEM_PROMPT, TASK)
    if hasattr(memory, "bind_requirements"):
        memory.bind_requirements([Requirement("hunk:1", "I01: the failing behaviour of `tests/...` is fixed", "hunk")])
    for action, observation in episode():
        memory.ingest(action)
        memory.ingest(observation)
    return memory.render(budget)


def acts(view: list[dict[str, Any]], tools: list[str] = TOOLS, want: tuple[str, dict[str, Any]] = ACTED,
         profile: str = "base") -> float:
    """How often (over seeds) the profile's next call is ``want`` (sim/base: bounded recall)."""
    hits = 0
    for seed in SEEDS:
        turn = SimLM(profile).act(view, schemas(tools), seed)
        hits += turn.call is not None and (turn.call.name, json.loads(turn.call.arguments or "{}")) == want
    return hits / len(SEEDS)


def without_fact(view: list[dict[str, Any]], memory_index: int) -> list[dict[str, Any]]:
    """The same context without the memory's message: the control."""
    return view[:memory_index] + view[memory_index + 1:]


def the_run_only_in(view: list[dict[str, Any]], index: int) -> None:
    holders = [i for i, m in enumerate(view) if "src/requests/models.py:842: in iter_content" in str(m.get("content"))]
    assert holders == [index], f"the traceback should sit only in the memory's message, found in {holders}"


def test_full_transcript_is_read_and_the_fact_matters() -> None:
    view = feed(FullOf(), 100_000)
    assert acts(view) > 0.5
    trimmed = [m for m in view if "checker I01" not in str(m.get("content"))]
    assert acts(trimmed) == 0  # without the run the mind runs the tests again


class FullOf:  # the plain transcript (memory.full without a window to trim to)
    def start(self, system: str, task: str) -> None:
        self.messages = [{"role": "system", "content": system}, {"role": "user", "content": task}]

    def ingest(self, event: Event) -> None:
        self.messages.append(event.message)

    def render(self, budget: int) -> list[dict[str, Any]]:
        return self.messages


def test_acg_decision_view() -> None:
    view = feed(ACGMemory(), 2_400)  # the run is out of the recent history, its units in the view
    assert str(view[2]["content"]).startswith("[memory] Decision view")
    the_run_only_in(view, 2)
    assert acts(view) > 0 and acts(without_fact(view, 2)) == 0


def test_rolling_summary() -> None:
    memory = SummaryMemory(SummarySettings(trigger_tokens=1_200, keep_fraction=0.5, summary_tokens=800))
    memory.bind(lambda messages, tools, purpose: {"role": "assistant", "content": "\n\n".join(
        "\n".join("| " + line for line in text.splitlines()) for text in (LISTING, RUN))})  # what it quoted
    view = feed(memory, 100_000)
    assert str(view[2]["content"]).startswith("[memory] Summary of the")
    the_run_only_in(view, 2)
    assert acts(view) > 0 and acts(without_fact(view, 2)) == 0


def test_memgpt_conversation_search_result() -> None:
    memory = MemGPTMemory()
    view = feed(memory, 100_000)
    found = memory.handle(ToolCall("conversation_search", json.dumps({"query": "chunk_size iter_content"})))
    view = view + [call("conversation_search", {"query": "chunk_size iter_content"}, 6), result(found, 6)]
    view = [m for m in view if not str(m.get("content") or "").startswith("checker I01")]  # evicted
    index = len(view) - 1
    the_run_only_in(view, index)
    assert acts(view) > 0 and acts(without_fact(view, index)) == 0


def test_memgpt_archival_passage() -> None:
    memory = MemGPTMemory()
    view = feed(memory, 100_000)
    memory.handle(ToolCall("archival_memory_insert", json.dumps({"content": RUN})))
    found = memory.handle(ToolCall("archival_memory_search", json.dumps({"query": "iter_content chunk_size"})))
    assert found.splitlines()[1].startswith("(1) passage 1:")
    view = view + [call("archival_memory_search", {"query": "iter_content chunk_size"}, 6), result(found, 6)]
    view = [m for m in view if not str(m.get("content") or "").startswith("checker I01")]
    index = len(view) - 1
    the_run_only_in(view, index)
    assert acts(view) > 0 and acts(without_fact(view, index)) == 0


def test_memgpt_core_memory_note() -> None:
    """Two issues; core memory notes that I01 was accepted (its verdict is evicted): it goes on with I02."""
    memory = MemGPTMemory()
    memory.start(SYSTEM_PROMPT, LONG_OBJECTIVE.format(m=2, repo="requests", ids="I01, I02"))
    listing = ("backlog: 2 units (target 2 passed)\nI01 [exception] Bug report for `requests`: 1 checks fail: "
               "TypeError\nI02 [assertion] Bug report for `requests`: 1 checks fail: AssertionError: assert False")
    for step, (name, args, text) in enumerate([("list_units", {}, listing)] + [
            ("read_file", {"path": "src/requests/api.py", "start": 1, "end": 40}, FILLER)] * 2, 1):
        memory.ingest(Event(step, "action", call(name, args, step)))
        memory.ingest(Event(step, "observation", result(text, step), {"tool": name, "arguments": args}))
    memory.handle(ToolCall("core_memory_append", json.dumps({"label": "progress", "content": "submitted: I01"})))
    view = memory.render(100_000)
    assert "submitted: I01" in view[0]["content"] and sum("submitted: I01" in str(m["content"]) for m in view) == 1
    with_note = acts(view, want=("run_tests", {"unit": "I02"}))
    memory.handle(ToolCall("core_memory_replace", json.dumps({"label": "progress", "old_content": "submitted: I01",
                                                               "new_content": "nothing yet"})))
    without = acts(memory.render(100_000), want=("run_tests", {"unit": "I02"}))  # only when it forgets I01
    assert with_note > 0 and with_note > without + 0.2


def test_langgraph_store_retrieved_item() -> None:
    memory = LangGraphStoreMemory()
    view = feed(memory, 3_000)  # the recent window keeps the last read only
    assert str(view[2]["content"]).startswith("[memory] Retrieved from the long-term store")
    the_run_only_in(view, 2)
    assert acts(view) > 0 and acts(without_fact(view, 2)) == 0


@pytest.mark.parametrize("profile", ["perfect"])
def test_the_perfect_reader_always_acts_on_the_view(profile: str) -> None:
    view = feed(ACGMemory(), 2_400)
    turn = SimLM(profile).act(view, schemas(TOOLS), 0)
    assert turn.call is not None and (turn.call.name, json.loads(turn.call.arguments)) == ACTED


BEFORE = """checker I01: FAIL
the issue's tests fail
FF                                                                       [100%]
=================================== FAILURES ===================================
__________________ TestRequests.test_response_chunk_size_type __________________
tests/test_requests.py:1453: in test_response_chunk_size_type
    chunks = r.iter_content(None)
src/requests/models.py:842: in iter_content
    raise TypeError(
E   TypeError: chunk_size must be an int, it is instead a <class 'NoneType'>.
_______________ TestRequests.test_response_without_release_conn ________________
tests/test_requests.py:2153: in test_response_without_release_conn
    resp.close()
src/requests/models.py:1037: in close
    release_conn()
E   TypeError: 'NoneType' object is not callable
2 failed"""
AFTER = """checker I01: FAIL
the issue's tests fail
.F                                                                       [100%]
=================================== FAILURES ===================================
_______________ TestRequests.test_response_without_release_conn ________________
tests/test_requests.py:2153: in test_response_without_release_conn
    resp.close()
src/requests/models.py:1037: in close
    release_conn()
E   TypeError: 'NoneType' object is not callable
1 failed, 1 passed"""
OLD, NEW = ("            raise StreamConsumedError()\n        elif chunk_size is None and not isinstance(chunk_size, int):",
            "            raise StreamConsumedError()\n        elif chunk_size is not None and not isinstance(chunk_size, int):")
EDIT = {"path": "src/requests/models.py", "old": OLD, "new": NEW, "unit": "I01"}
PAGE = "src/requests/api.py lines 1-250 of 300\n" + "\n".join(f"{n:5d}| # line {n} of a long module docstring, read "
                                                            "in full" for n in range(1, 251))
EDITED = ("edit: src/requests/models.py changed at line 840; the new text reads:\n  840|             raise "
          "StreamConsumedError()\n  841|         elif chunk_size is not None and not isinstance(chunk_size, int):")


def test_a_dated_run_in_the_acg_view_tells_a_good_edit_from_a_wrong_one() -> None:
    """The run before its edit is only in ACG's view (with its step): the run after shows one failure
    fewer, so it keeps the edit and turns to the next symptom. Without the view it cannot tell, and
    backs the edit out. (sim/perfect: full recall, so only what the view says decides.)"""
    memory = ACGMemory()
    memory.start(SYSTEM_PROMPT, TASK)
    memory.bind_requirements([Requirement(f"hunk:{i}", f"I01: hunk {i}", "hunk") for i in (1, 2)])
    turns = [("list_units", {}, LISTING, []), ("run_tests", {"unit": "I01"}, BEFORE, ["hunk:1", "hunk:2"]),
             ("search_files", {"query": "def iter_content("},
              'search_files "def iter_content(": 1 matching line\nsrc/requests/models.py:799:     def iter_content(self, chunk_size=1, decode_unicode=False):', []),
             ("read_file", {"path": "src/requests/api.py", "start": 1, "end": 250}, PAGE, []),
             ("edit", EDIT, EDITED, ["hunk:1", "hunk:2"]), ("run_tests", {"unit": "I01"}, AFTER, ["hunk:1", "hunk:2"])]
    for step, (name, args, text, reqs) in enumerate(turns, 1):
        memory.ingest(Event(step, "action", call(name, args, step)))
        memory.ingest(Event(step, "observation", result(text, step),
                            {"tool": name, "arguments": args, "call_id": f"call_{step}", "requirements": reqs}))
    view = memory.render(6_000)  # the recent history keeps the edit and the run after it
    assert str(view[2]["content"]).startswith("[memory] Decision view at step 6")
    assert "| FF " in view[2]["content"] and not any("FF " in str(m.get("content")) for m in view[3:])
    assert any(m.get("tool_calls") and m["tool_calls"][0]["function"]["name"] == "edit" for m in view[3:])
    keep = ("search_files", {"query": "def close("})
    revert = ("edit", {"path": "src/requests/models.py", "old": NEW, "new": OLD})
    assert acts(view, want=keep, profile="perfect") == 1
    control = without_fact(view, 2)
    assert acts(control, want=revert, profile="perfect") == 1
    assert acts(view, want=keep) > acts(control, want=keep)  # sim/base: the view helps under bounded recall
