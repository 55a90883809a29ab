"""Replay a recorded transcript through a fresh context builder, as the native loop fed it.

The replay makes no model call. It starts the builder on the task (the run's system prompt and the
objective), binds the task's requirements, and walks the transcript: before every turn the builder
would have been asked for a view it renders one at the replay budget; each assistant message goes
in as an ``action`` event, each observation as an ``observation`` event whose origin carries the
tool, the arguments and the requirement ids (``Environment.action_origins``), exactly as
``backends.native.apply`` builds it: the arguments as the environment's execution completed them
(``backends.native.as_executed``: schema defaults filled in), for a controller that passes calls
through unchanged (``standard``, the controller of the runs the ``recall`` stage replays).

What needed a model in the recorded run is treated so that no step is invented:

- *memory tool calls* (memgpt's ``core_memory_append`` ...) are the recorded policy's own decisions
  for the memory it ran with. They are replayed into that memory only: the builder answers them
  itself (``handle``; the replies are compared with the recorded ones) and sees them as ``memory``
  events. Any other memory never saw them, so they are skipped.
- *a memory's own requests* (memgpt's summary of evicted messages, ``name: memory-<purpose>`` in the
  transcript) are answered with the recorded replies, in order, only when the replay runs that
  memory at the recorded budget (the model's window), where the evictions fall where they fell.
  At any other budget the builder gets no model, and memgpt writes its no-model placeholder
  summary: a recorded summary of other messages would leak later evidence into the view.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator, cast

from pushbench.backends.native import as_executed, call_origin, decode, memory_origin, system_prompt
from pushbench.memory.base import MAX_MEMORY_CALLS_PER_STEP, Event, bind_llm, bind_requirements
from pushbench.replay.recall.evidence import Seen
from pushbench.policies.base import turn_from_message
from pushbench.tools.base import Environment


@dataclass(frozen=True)
class TurnView:
    """The view the builder rendered before an external turn, and that turn."""

    step: int  # external actions before this turn
    message: dict[str, Any]  # the assistant message (the decision)
    view: list[dict[str, Any]]


@dataclass
class ReplayStats:
    memory_calls: int = 0  # memory tool calls replayed into the builder
    mismatched_replies: int = 0  # of those, replies that differ from the recorded ones
    side_requests: int = 0  # the builder's own model requests (summaries) during the replay
    side_unanswered: int = 0  # of those, requests no recorded reply was left for
    observations: list[Seen] = field(default_factory=list)  # every observation fed so far


@dataclass(frozen=True)
class Recording:
    """One recorded episode: what the replay needs besides the builder."""

    messages: list[dict[str, Any]]
    objective: str
    controller: Any  # a fresh controller of the recorded kind (for the system prompt)
    memory: str  # the memory the episode ran with
    memory_tools: frozenset[str]  # that memory's own tool names
    window: int | None  # the recorded model's context window, when known


def _side_replies(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in messages if str(m.get("name") or "").startswith("memory-")]


def _bind_side_llm(builder: Any, replies: list[dict[str, Any]], stats: ReplayStats) -> None:
    queue = iter(replies)

    def ask(messages: list[dict[str, Any]], tools: list[dict[str, Any]], purpose: str) -> dict[str, Any]:
        stats.side_requests += 1
        reply = next(queue, None)
        stats.side_unanswered += reply is None
        return reply if reply is not None else {"role": "assistant", "content": ""}
    bind_llm(builder, ask)


def replay(recording: Recording, builder: Any, budget: int, env: Environment,
           stats: ReplayStats | None = None) -> Iterator[TurnView]:
    """Feed ``recording`` into ``builder``; yield the view before each external turn."""
    stats = stats if stats is not None else ReplayStats()
    own = builder.name == recording.memory
    builder.start(system_prompt(recording.controller), recording.objective)
    bind_requirements(builder, env.requirements())
    if own and budget == recording.window:
        _bind_side_llm(builder, _side_replies(recording.messages), stats)
    messages = [m for m in recording.messages if not str(m.get("name") or "").startswith("memory-")]
    step, internal, i = 0, 0, 0
    while i < len(messages):
        message = messages[i]
        if message.get("role") != "assistant":
            i += 1  # an orphan reply (not produced by this loop): nothing to feed
            continue
        call = turn_from_message(message).call
        reply = messages[i + 1] if i + 1 < len(messages) else None
        is_memory = (call is not None and call.name in recording.memory_tools and internal < MAX_MEMORY_CALLS_PER_STEP
                     and reply is not None and reply.get("role") == "tool")
        if is_memory and not own:
            internal, i = internal + 1, i + 2
            continue
        view = list(builder.render(budget))  # a builder may keep appending to the list it returned
        builder.ingest(Event(step + 1, "action", message))
        if is_memory:
            _memory_call(builder, call, cast(dict[str, Any], reply), step, stats)  # is_memory: a tool reply
            internal, i = internal + 1, i + 2
            continue
        yield TurnView(step, message, view)
        internal = 0
        answered = reply is not None and reply.get("role") == ("tool" if call is not None else "user")
        if not answered:
            i += 1  # the episode ended on this turn (a stop the controller let through)
            continue
        assert reply is not None  # answered
        step += 1
        origin = ({"controller": recording.controller.name, "requirements": []} if call is None else
                  call_origin(env, as_executed(env, call), call.call_id))  # the arguments as the live loop held them
        builder.ingest(Event(step, "observation", reply, origin))
        stats.observations.append(Seen(step, None if call is None else call.name, str(reply.get("content") or "")))
        i += 2


def _memory_call(builder: Any, call: Any, recorded: dict[str, Any], step: int, stats: ReplayStats) -> None:
    text = builder.handle(decode(call))
    stats.memory_calls += 1
    stats.mismatched_replies += text != recorded.get("content")
    message = {"role": "tool", "tool_call_id": call.call_id, "content": text}
    builder.ingest(Event(step, "memory", message, memory_origin(call)))

