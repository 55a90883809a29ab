"""One episode's timeline from its trace: the turns of the transcript joined with the verifier's log.

The transcript is walked as ``replay.recall.replay`` walks it (and as ``backends.native`` wrote
it): a memory's own requests (``name: memory-<purpose>``) and its tool calls are attached to the
external turn they preceded; every external turn is one step of the budget once it is answered,
and the verifier's events of that step (the call, its verdicts) are joined by step number.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from typing import Any

from pushbench.memory.base import MAX_MEMORY_CALLS_PER_STEP
from pushbench.policies.base import turn_from_message


@dataclass
class Turn:
    """One external turn: indices into the transcript, and what the verifier logged for it."""

    step: int | None  # 1-based budget step; None: the episode ended on this turn (a stop let through)
    action: int  # transcript index of the assistant message
    reply: int | None  # transcript index of the observation (tool or user message)
    tool: str | None  # None: a text reply (a stop)
    args: Any = None
    signature: str = ""  # tool and arguments, to align two episodes at their first different action
    ok: bool | None = None
    error: str | None = None
    intercepted_by: str | None = None  # the controller that refused this action
    verdicts: list[list[str]] = field(default_factory=list)  # [item, verdict]
    valid_count: int = 0  # verified count after this turn
    memory: list[list[int]] = field(default_factory=list)  # [call, reply] indices of internal memory calls
    side: list[int] = field(default_factory=list)  # indices of the memory's own model replies before it


def _is_side(message: dict[str, Any]) -> bool:
    return str(message.get("name") or "").startswith("memory-")


def _arguments(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError:
            return raw
    return raw


def walk(messages: list[dict[str, Any]], memory_tools: frozenset[str]) -> list[Turn]:
    """The external turns of a transcript, with their internal memory calls and side replies."""
    turns: list[Turn] = []
    memory: list[list[int]] = []
    order = [i for i, m in enumerate(messages) if not _is_side(m)]
    sides = [i for i, m in enumerate(messages) if _is_side(m)]
    position, step, taken = 0, 0, 0
    while position < len(order):
        i = order[position]
        message = messages[i]
        if message.get("role") != "assistant":
            position += 1
            continue
        call = turn_from_message(message).call
        reply_at = order[position + 1] if position + 1 < len(order) else None
        reply = messages[reply_at] if reply_at is not None else None
        if (call is not None and call.name in memory_tools and len(memory) < MAX_MEMORY_CALLS_PER_STEP
                and reply is not None and reply.get("role") == "tool"):
            memory.append([i, reply_at])  # type: ignore[list-item]
            position += 2
            continue
        answered = reply is not None and reply.get("role") == ("tool" if call is not None else "user")
        step += answered
        args = _arguments(call.arguments) if call is not None else None
        before = [j for j in sides[taken:] if j < i]
        taken += len(before)
        turns.append(Turn(step if answered else None, i, reply_at if answered else None,
                          call.name if call is not None else None, args,
                          signature(call.name if call is not None else None, args),
                          memory=memory, side=before))
        memory = []
        position += 2 if answered else 1
    return turns


def signature(tool: str | None, args: Any) -> str:
    if tool is None:
        return "(text)"
    return tool + " " + (json.dumps(args, sort_keys=True) if not isinstance(args, str) else args)


def join_events(turns: list[Turn], events: list[dict[str, Any]]) -> dict[str, Any]:
    """Fill each turn from the verifier's log; return the count curve and the end event."""
    calls = {e["step"]: e for e in events if e.get("kind") == "call"}
    verdicts: dict[int, list[dict[str, Any]]] = {}
    for event in events:
        if event.get("kind") == "verdict":
            verdicts.setdefault(event["step"], []).append(event)
    end = next((e for e in reversed(events) if e.get("kind") == "end"), None)
    count, curve = 0, [[0, 0]]
    for turn in turns:
        if turn.step is None:
            turn.valid_count = count
            continue
        call = calls.get(turn.step, {})
        turn.ok, turn.error = call.get("ok"), call.get("error")
        turn.intercepted_by = (call.get("info") or {}).get("intercepted_by")
        for verdict in verdicts.get(turn.step, []):
            turn.verdicts.append([str(verdict.get("item")), str(verdict.get("verdict"))])
            count = int(verdict.get("valid_count", count))
        turn.valid_count = count
        curve.append([turn.step, count])
    return {"curve": curve, "end": end}


def turn_dicts(turns: list[Turn]) -> list[dict[str, Any]]:
    # what asdict gives, without its deep copy (the page only serialises these)
    return [{name: getattr(t, name) for name in _FIELDS} for t in turns]


_FIELDS = tuple(f.name for f in fields(Turn))
