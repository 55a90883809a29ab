"""One episode's page data: its row, timeline, count curve and the context the model saw each turn.

The context of turn k is rebuilt with no model call: the recorded transcript is replayed
(``memory.recall.replay``) through a fresh builder of the episode's own memory at the recorded
model's window, so memgpt's evictions and recorded summaries, or any builder's own messages, fall
where they fell. A view is stored as references: ranges of transcript indices, and indices into a
per-episode pool of the messages the builder made itself (system prompts with memory blocks,
summaries), so thousands of views cost little.
"""

from __future__ import annotations

import json
from typing import Any

from pushbench.memory.base import memory_tools
from pushbench.memory.recall.replay import Recording, replay
from pushbench.registry import CONTROLLERS, MEMORIES
from pushbench.viewer.timeline import join_events, turn_dicts, walk

RANGE, POOL = 0, 1  # view segment kinds: [RANGE, first, last] transcript indices; [POOL, k]


def own_tools(memory: str) -> frozenset[str]:
    return frozenset(t["function"]["name"] for t in memory_tools(MEMORIES.make(memory)))


def episode_payload(row: dict[str, Any], trace: dict[str, Any], env: Any | None, window: int | None) -> dict[str, Any]:
    """Everything the episode page shows; ``env`` (the task's environment) is needed for the
    context views (its requirements feed the builder); without it the page says why none exist."""
    messages = trace.get("messages", [])
    tools = own_tools(row["memory"])
    turns = walk(messages, tools)
    joined = join_events(turns, trace.get("events", []))
    payload: dict[str, Any] = {
        "row": row, "objective": trace.get("objective", ""), "messages": messages, "turns": turn_dicts(turns),
        "curve": joined["curve"], "end": joined["end"],
        "extra": {k: trace[k] for k in ("api", "tool_failures", "wall_seconds") if k in trace},
    }
    if env is None:
        payload["views"], payload["pool"] = [], []
        payload["views_note"] = "no context views: the task's manifest was not found"
        return payload
    if window is None:
        payload["views"], payload["pool"] = [], []
        payload["views_note"] = f"no context views: the context window of {row['model']} is unknown here"
        return payload
    views, pool = context_views(row, trace, env, window, tools)
    if len(views) != len(turns):  # a transcript this loop did not write (e.g. hand-made): no guessing
        payload["views"], payload["pool"] = [], []
        payload["views_note"] = "no context views: replaying the transcript did not reproduce its turns"
        return payload
    payload["views"], payload["pool"], payload["views_note"] = views, pool, (
        f"rebuilt by replaying the transcript through a fresh {row['memory']} at the {window}-token window")
    return payload


def context_views(row: dict[str, Any], trace: dict[str, Any], env: Any, window: int,
                  tools: frozenset[str]) -> tuple[list[list[list[int]]], list[dict[str, Any]]]:
    messages = trace["messages"]
    recording = Recording(messages, trace["objective"], CONTROLLERS.make(row["controller"]), row["memory"],
                          tools, window)
    where = {id(m): i for i, m in enumerate(messages)}
    pool: list[dict[str, Any]] = []
    pooled: dict[str, int] = {}
    # A builder shows the same message objects turn after turn (its head, a kept summary) and never
    # edits a message it returned: each object's pool index is found once, not dumped every turn.
    # The object is held so its id is not reused.
    seen: dict[int, tuple[dict[str, Any], int]] = {}
    views = []
    for turn in replay(recording, MEMORIES.make(row["memory"]), window, env):
        views.append(_encode(turn.view, where, pool, pooled, seen))
    return views, pool


def _encode(view: list[dict[str, Any]], where: dict[int, int], pool: list[dict[str, Any]],
            pooled: dict[str, int], seen: dict[int, tuple[dict[str, Any], int]]) -> list[list[int]]:
    segments: list[list[int]] = []
    for message in view:
        index = where.get(id(message))
        if index is not None:
            last = segments[-1] if segments else None
            if last and last[0] == RANGE and last[2] == index - 1:
                last[2] = index
            else:
                segments.append([RANGE, index, index])
            continue
        known = seen.get(id(message))
        if known is None:
            key = json.dumps(message, sort_keys=True, default=str)
            if key not in pooled:
                pooled[key] = len(pool)
                pool.append(message)
            known = seen[id(message)] = (message, pooled[key])
        segments.append([POOL, known[1]])
    return segments


def decode_view(segments: list[list[int]], messages: list[dict[str, Any]],
                pool: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages of one stored view (the viewer's JavaScript does the same)."""
    out: list[dict[str, Any]] = []
    for segment in segments:
        if segment[0] == RANGE:
            out.extend(messages[segment[1]: segment[2] + 1])
        else:
            out.append(pool[segment[1]])
    return out
