"""SimLM reads an ACG view as it reads any quoted recall: facts at the view's place, no ACG shortcut."""

from __future__ import annotations

from pushbench import guidance as g
from pushbench.memory.acg import ACGMemory
from pushbench.memory.base import Event
from pushbench.policies.base import tool_call_message
from pushbench.policies.sim import get_profile
from pushbench.registry import MINDS

REPOSCAN_TASK = "Find 10 test functions in the requests repository that take the `httpbin` fixture."
DATAOPS_TASK = "Work through a backlog of 2 data-operations units; each unit has a checker."


def step(memory: ACGMemory, n: int, tool: str, args: dict, text: str) -> None:
    memory.ingest(Event(n, "action", tool_call_message(tool, args, f"c{n}")))
    memory.ingest(Event(n, "observation", {"role": "tool", "tool_call_id": f"c{n}", "content": text},
                        {"tool": tool, "arguments": args, "call_id": f"c{n}"}))


def facts_of(mind_name: str, messages: list[dict]) -> list[tuple[int, int, str]]:
    mind = MINDS.load(mind_name)(get_profile("sim/base"), 11)
    mind.reader.update(messages, [])
    f = mind.reader.facts
    return [(int(k), int(o), f.names[int(key)]) for k, o, key in zip(f.array("kind"), f.array("offset"), f.array("key"))]


def test_reposcan_reads_quoted_verdicts_and_pages_where_the_view_sits() -> None:
    from pushbench.tasks.reposcan.mind import MEM_DONE, MEM_PAGE

    memory = ACGMemory()
    memory.start("You are an agent.", REPOSCAN_TASK)
    step(memory, 1, "search", {"query": "test httpbin", "page": 2},
         'search "test httpbin": page 2 of 5 (44 results)\n[1] tests.test_a.test_x\n    L3: def test_x(httpbin):')
    step(memory, 2, "submit", {"ids": ["tests.test_a.test_x"]},
         "submit: 1 accepted, 0 rejected, 0 duplicate\n  accepted  tests.test_a.test_x")
    step(memory, 3, "status", {}, "status: 1 accepted (verified) of target 10")
    messages = memory.render(1_000)  # a small window: only the latest turn stays beside the view
    view = messages[2]["content"]
    assert g.ACG_VIEW.match(view.splitlines()[0]) and "|   accepted  tests.test_a.test_x" in view
    facts = facts_of("reposcan", messages)
    done = [f for f in facts if f[0] == MEM_DONE]
    pages = [f for f in facts if f[0] == MEM_PAGE]
    assert [f[2] for f in done] == ["tests.test_a.test_x"] and [f[2] for f in pages] == ["test httpbin"]
    view_end = facts_of("reposcan", messages[:3])
    assert {f[:3] for f in done + pages} <= {f[:3] for f in view_end}  # read at the view's offsets


def test_unit_minds_read_a_quoted_acceptance_as_a_done_unit_and_nothing_from_framing() -> None:
    from pushbench.policies.sim.units import ACCEPTED, PROGRESS

    memory = ACGMemory()
    memory.start("You are an agent.", DATAOPS_TASK)
    step(memory, 1, "submit", {"unit": "U01"}, "submit U01: accepted (checker passed).")
    step(memory, 2, "status", {}, "status: 1 units accepted (verified) of target 2")
    messages = memory.render(600)
    view_only = messages[:3]
    facts = facts_of("dataops", view_only)
    assert (PROGRESS, "U01") in {(k, key) for k, _, key in facts}
    assert ACCEPTED not in {k for k, _, _ in facts}  # a quoted verdict is not counted again
    framing = [line for line in messages[2]["content"].splitlines() if not line.startswith("| ")]
    bare = facts_of("dataops", messages[:2] + [{"role": "user", "content": "\n".join(framing)}])
    assert bare == []  # headers and provenance lines give SimLM nothing
