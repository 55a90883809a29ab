"""The context-builder contract: every event goes in with its origin; each step a view comes out.

A builder sees the whole episode as events (the task, each action, each observation, with the
step and tool that produced it) and renders the messages the policy sees under a token budget.
``full`` is the plain transcript; memories such as MemGPT-style blocks or a source-grounded graph
implement the same three methods.

Optional parts (a builder without them behaves exactly like ``full``):

- ``tools() -> list[schema]``: extra tool schemas the builder offers the policy (memory tools).
- ``handle(call) -> str | None``: the builder's answer to one of its own tool calls (``None``: not
  its tool). The loop consults it before the controller and the environment. Such calls are
  *internal*: they cost an LLM call (counted in ``llm_calls`` and tokens) but no step of the
  budget, never reach the controller, the environment or the verifier log, and at most
  ``MAX_MEMORY_CALLS_PER_STEP`` of them happen before one external action; after that the memory
  tools are withdrawn for that turn (a memory call then is an unknown tool: an invalid action).
- ``bind(llm)``: the loop hands over a :class:`SideLLM`, the same policy behind a function, for the
  builder's own model requests (e.g. a summary of evicted messages). Each request is an LLM call,
  counted, and its reply is stored in the transcript (marked ``name: memory-<purpose>``) so the
  episode can be replayed.
- ``bind_requirements(requirements)``: the loop hands over the task's requirements
  (``Environment.requirements()``, a list of ``pushbench.requirements.Requirement``) right after
  ``start``. Every observation event of a tool call carries the ids the call serves in
  ``Event.origin["requirements"]`` (``Environment.action_origins``, validated; ``[]`` when none or
  unknown), whether or not the builder binds them, so all builders see the same links.

To steer SimLM, emit these forms (``pushbench.guidance``; ``guidance.FORMS`` says which ones SimLM
reads). A memory's own notices start with ``[memory]``. SimLM reads:

- ``guidance.MEMORY_WARNING`` as the latest message: it writes its progress note now;
- ``guidance.SUMMARY_SYSTEM`` as the system message of a tool-less request: it writes a summary;
- ``guidance.core_block("progress", ...)`` in the system message: the note it edits next;
- ``guidance.memory_stats`` in the system message: whether archival memory has passages to search;
- memory notes (``guidance.count_note``, ``read_note``, ``submitted_note``, and verdict lines
  quoted with ``guidance.quoted``) anywhere it reads: recalled as facts (``guidance.note_facts``).

Framing lines (``guidance.evicted_summary``'s and ``guidance.RETRIEVED``'s first lines,
``guidance.retrieved_item`` headers) and prompt rules (``guidance.MEMGPT_RULES``,
``guidance.MEMGPT_PERSONA``) are for real models; what they frame is read as ordinary lines.
``tests/test_guidance.py`` checks every ``[memory]`` line a memory emits is a form here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from pushbench.tools.base import ToolCall

MAX_MEMORY_CALLS_PER_STEP = 4  # internal memory calls before an external action (no endless loops)


@dataclass
class Event:
    step: int
    kind: str  # "action" | "observation" | "memory" (an internal memory call's result) | "note"
    message: dict[str, Any]  # the chat message this event contributes
    origin: dict[str, Any] = field(default_factory=dict)  # tool, arguments, call id, controller


class ContextBuilder(Protocol):
    name: str

    def start(self, system: str, task: str) -> None: ...

    def ingest(self, event: Event) -> None: ...

    def render(self, budget_tokens: int) -> list[dict[str, Any]]: ...


class SideLLM(Protocol):
    """The policy as a function for a builder's own requests; returns the assistant message."""

    def __call__(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                 purpose: str) -> dict[str, Any]: ...


@runtime_checkable
class ToolMemory(Protocol):
    """A memory with tools of its own (memgpt's archive, langgraph-store's store): the loop lists
    them beside the task's and hands their calls to ``handle``, which answers without a step."""

    def tools(self) -> list[dict[str, Any]]: ...

    def handle(self, call: ToolCall) -> str | None: ...


@runtime_checkable
class ModelMemory(Protocol):
    """A memory that asks the policy itself (summary, memgpt): ``bind`` gives it the side LLM."""

    def bind(self, llm: SideLLM) -> None: ...


@runtime_checkable
class RequirementMemory(Protocol):
    """A memory built on the task's requirement ids (ACG): ``bind_requirements`` gives them."""

    def bind_requirements(self, requirements: list[Any]) -> None: ...


def memory_tools(memory: object) -> list[dict[str, Any]]:
    return list(memory.tools()) if isinstance(memory, ToolMemory) else []


def handle_memory_call(memory: object, call: ToolCall) -> str | None:
    return memory.handle(call) if isinstance(memory, ToolMemory) else None


def bind_llm(memory: object, llm: SideLLM) -> None:
    if isinstance(memory, ModelMemory):
        memory.bind(llm)


def bind_requirements(memory: object, requirements: list[Any]) -> None:
    if isinstance(memory, RequirementMemory):
        memory.bind_requirements(list(requirements))
