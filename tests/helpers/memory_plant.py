"""Plant a needed fact only in one memory's message and measure how often a SimLM mind acts on it.

Every mind must read every memory's output where it sits in the context (issue 30 item 4): ACG's
decision view, the rolling summary, memgpt's core blocks and archival search results, the
LangGraph store's retrieved items. A family's ``tests/tasks/<family>/test_mind_reads_memory.py``
describes, per memory output, a context whose needed fact is in that output alone, and a test of
the mind's next turn; this module builds the context with the real memory (its ``ingest`` and
``render``, the events a backend gives it, real tool results of the family's environment) and
counts the turns that act on the fact over request seeds. Recall is bounded, so the rate is below
1 for ``sim/base``; what is checked is that it is above 0 (and above a control without the fact,
where acting on the fact means leaving something out).

Three shapes (each family fills them with its own calls and notes):
- ``EVIDENCE`` (``acg``, ``langgraph-store``): ``early`` calls' results hold the fact; ``recent``
  calls after them push those results out of the recent history at ``WINDOWS`` tokens, so only the
  memory's message (the decision view, the retrieved items) can show them;
- ``NOTE`` (``summary``, ``memgpt-core``): the fact is a memory note SimLM writes (``guidance``'s
  count/read/submitted/pending notes): the rolling summary's text (a scripted summary request
  answers with the note; the summary condenses the ``early`` calls, the ``recent`` ones stay) or
  memgpt's ``progress`` core block in the system message;
- ``ARCHIVE`` (``memgpt-archival``): the note is an archival passage; the context ends with
  SimLM's ``archival_memory_search`` call and the memory's reply, which alone holds it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable

from pushbench.backends.native import call_origins, decode, system_prompt
from pushbench.controllers import make_controller
from pushbench.memory import make_memory
from pushbench.memory.base import Event, bind_requirements, memory_tools
from pushbench.memory.summary import SummaryMemory, SummarySettings
from pushbench.policies.base import Turn, text_message, tool_call_message
from pushbench.policies.sim import SimLM
from pushbench.tools.base import ToolCall

EVIDENCE = ("acg", "langgraph-store")
NOTE = ("summary", "memgpt-core")
ARCHIVE = ("memgpt-archival",)
MEMORIES = EVIDENCE + NOTE + ARCHIVE  # every memory output a mind must read
WINDOW = 4_000  # small enough that the early results leave the recent history
WINDOWS = {"acg": 8_000, "langgraph-store": 8_000}  # room for the view / retrieved items beside the recent turns
MODEL = "sim/base"
SEEDS = range(60)

Call = tuple[str, dict[str, Any]]


@dataclass
class Scenario:
    """One memory output with a needed fact in it, and the turn that acts on the fact."""

    env: Any  # a fresh environment of the family's task (its tools produce the results)
    acts: Callable[[Turn], bool]  # does this turn act on the fact?
    fact: str | tuple[str, ...]  # the fact's text (or its alternatives): in the memory's message only
    early: list[Call] = field(default_factory=list)  # EVIDENCE: calls whose results hold the fact
    recent: list[Call] = field(default_factory=list)  # calls after them: the recent history
    note: str = ""  # NOTE, ARCHIVE: the fact as SimLM's memory note
    search: str = ""  # ARCHIVE: the query of SimLM's archival_memory_search
    window: int | None = None  # the context window, if not the memory's default (WINDOWS, WINDOW)


class Driver:
    """Feeds a memory the events a backend would: each call and its real result, with origins."""

    def __init__(self, memory: Any, env: Any):
        self.memory, self.env, self.n = memory, env, 0
        memory.start(system_prompt(make_controller("standard")), env.task.objective)
        bind_requirements(memory, env.requirements())

    def call(self, name: str, args: dict[str, Any]) -> str:
        call_id = f"call_{self.n}"
        self.n += 1
        message = tool_call_message(name, args, call_id)
        self.memory.ingest(Event(self.env.steps + 1, "action", message))
        call = decode(ToolCall(name, args, call_id))
        obs = self.env.execute(call)
        reply = {"role": "tool", "tool_call_id": call_id, "content": obs.text}
        self.memory.ingest(Event(self.env.steps, "observation", reply, {
            "tool": name, "arguments": args, "call_id": call_id, "requirements": call_origins(self.env, call)}))
        return obs.text

    def memory_call(self, name: str, args: dict[str, Any]) -> str:
        """One of the memory's own tools, as the backend answers it (an internal call)."""
        call_id = f"call_{self.n}_m"
        self.n += 1
        message = tool_call_message(name, args, call_id)
        self.memory.ingest(Event(self.env.steps + 1, "action", message))
        reply_text = self.memory.handle(ToolCall(name, args, call_id))
        assert reply_text is not None and not reply_text.startswith("ERROR"), reply_text
        self.memory.ingest(Event(self.env.steps, "memory", {"role": "tool", "tool_call_id": call_id,
                                                            "content": reply_text},
                                 {"tool": name, "arguments": args, "call_id": call_id, "internal": True}))
        return reply_text


def _scripted_summary(note: str) -> Callable[..., dict[str, Any]]:
    def answer(messages: list[dict[str, Any]], tools: list[dict[str, Any]], purpose: str) -> dict[str, Any]:
        return text_message(note)
    return answer


def context(memory: str, scenario: Scenario) -> tuple[list[dict[str, Any]], list[dict[str, Any]], int]:
    """The messages the memory renders for ``scenario`` at ``WINDOW`` tokens, the tools offered with
    them, and the index of the memory's message that holds the fact."""
    if memory == "summary":  # it condenses every early call, then nothing more (the recent calls stay)
        built: Any = SummaryMemory(SummarySettings(trigger_tokens=1, keep_fraction=0.01, summary_tokens=400))
        built.bind(_scripted_summary(scenario.note))
    else:
        built = make_memory("memgpt" if memory.startswith("memgpt") else memory)
    driver = Driver(built, scenario.env)
    for name, args in scenario.early:
        driver.call(name, args)
    if memory == "summary":
        assert scenario.early, "the summary needs early calls to condense"
        built.render(WINDOW)
        built.settings = SummarySettings(trigger_tokens=10**6, keep_fraction=0.5, summary_tokens=400)
    if memory == "memgpt-core":  # written earlier: the call that wrote it has left the context
        assert "updated" in built.handle(ToolCall("core_memory_append", {"label": "progress", "content": scenario.note}))
    if memory == "memgpt-archival":
        assert "stored" in built.handle(ToolCall("archival_memory_insert", {"content": scenario.note}))
    for name, args in scenario.recent:
        driver.call(name, args)
    if memory == "memgpt-archival":
        driver.memory_call("archival_memory_search", {"query": scenario.search})
    messages = list(built.render(scenario.window or WINDOWS.get(memory, WINDOW)))
    facts = (scenario.fact,) if isinstance(scenario.fact, str) else scenario.fact
    holders = {i for i, m in enumerate(messages) for fact in facts if fact in _text(m)}
    assert len(holders) == 1, f"{memory}: the fact {facts!r} is in messages {sorted(holders)}, not in one"
    where = holders.pop()
    expected = {"acg": "[memory] Decision view", "langgraph-store": "[memory] Retrieved",
                "summary": "[memory] Summary of the", "memgpt-core": "<progress ",
                "memgpt-archival": "archival_memory_search "}[memory]
    assert expected in _text(messages[where]), f"{memory}: the fact is not in the memory's message"
    return messages, scenario.env.schemas() + memory_tools(built), where


def _text(message: dict[str, Any]) -> str:
    """What a message tells the model (the model's own call arguments tell it nothing new)."""
    return str(message.get("content") or "")


def acting_rate(messages: list[dict[str, Any]], tools: list[dict[str, Any]], acts: Callable[[Turn], bool],
                model: str = MODEL, seeds: range = SEEDS) -> float:
    """The share of request seeds whose next turn acts on the fact."""
    sim = SimLM(model)
    return sum(bool(acts(sim.act(messages, tools, seed))) for seed in seeds) / len(seeds)


def call_of(turn: Turn) -> tuple[str, dict[str, Any]]:
    """The turn's call (name, arguments); ("", {}) for a text reply."""
    if turn.call is None:
        return "", {}
    args = turn.call.arguments
    return turn.call.name, json.loads(args) if isinstance(args, str) else dict(args)
