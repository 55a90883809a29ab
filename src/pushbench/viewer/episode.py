"""One episode's page data: its row, timeline, count curve and the context the model saw each turn.

The context of each turn is the one the run recorded as it went (``memory.viewlog``, the trace's
``views``). A trace without them (a fork, a black-box agent's, an older one) is rebuilt with no
model call: the transcript is replayed (``replay.recall.replay``) through a fresh builder of the
episode's own memory at the recorded model's window, so memgpt's evictions and recorded summaries,
or any builder's own messages, fall where they fell. A view is stored as references: ranges of
transcript indices, and indices into a per-episode pool of the messages the builder made itself
(system prompts with memory blocks, summaries), so thousands of views cost little.
"""

from __future__ import annotations

from typing import Any

from pushbench.log.models import Trace
from pushbench.memory.base import memory_tools
from pushbench.replay.recall.replay import Recording, replay
from pushbench.memory.viewlog import ViewEncoder, decode_view
from pushbench.registry import CONTROLLERS, MEMORIES
from pushbench.viewer.timeline import join_events, turn_dicts, walk

__all__ = ["context_views", "decode_view", "episode_payload", "own_tools"]


def own_tools(memory: str) -> frozenset[str]:
    return frozenset(t["function"]["name"] for t in memory_tools(MEMORIES.make(memory)))


def episode_payload(row: dict[str, Any], trace: Trace, env: Any, window: int | None) -> dict[str, Any]:
    """Everything the episode page shows. The context views are the trace's own (recorded as the
    run went) when it has them for every turn; else ``env`` (the task's environment: its
    requirements feed the builder; or a callable giving it, called only then) and ``window``
    rebuild them by a replay; without either the page says why there are none."""
    messages = trace.transcript
    tools = own_tools(row["memory"])
    turns = walk(messages, tools)
    joined = join_events(turns, trace.events)
    payload: dict[str, Any] = {
        "row": row, "objective": trace.objective or "", "messages": messages, "turns": turn_dicts(turns),
        "curve": joined["curve"], "end": joined["end"],
        "extra": {k: getattr(trace, k) for k in ("api", "tool_failures", "wall_seconds")
                  if getattr(trace, k) is not None},
    }
    recorded = trace.views
    if isinstance(recorded, dict) and len(recorded.get("segments") or []) == len(turns):
        payload["views"], payload["pool"] = recorded["segments"], recorded.get("pool") or []
        payload["views_note"] = "recorded as the run went: the messages the model was sent each turn"
        return payload
    env = env() if callable(env) else env
    if env is None:
        return _no_views(payload, "no context views: the task's manifest was not found")
    if window is None:
        return _no_views(payload, f"no context views: the context window of {row['model']} is unknown here")
    views, pool = context_views(row, trace, env, window, tools)
    if len(views) != len(turns):  # a transcript this loop did not write (e.g. hand-made): no guessing
        return _no_views(payload, "no context views: replaying the transcript did not reproduce its turns")
    payload["views"], payload["pool"], payload["views_note"] = views, pool, (
        f"rebuilt by replaying the transcript through a fresh {row['memory']} at the {window}-token window")
    return payload


def _no_views(payload: dict[str, Any], note: str) -> dict[str, Any]:
    payload["views"], payload["pool"], payload["views_note"] = [], [], note
    return payload


def context_views(row: dict[str, Any], trace: Trace, env: Any, window: int,
                  tools: frozenset[str]) -> tuple[list[list[list[int]]], list[dict[str, Any]]]:
    """The views of a transcript with none recorded, rebuilt by replaying it through a fresh
    builder of the episode's memory (the same encoding as the run's ``ViewLog``)."""
    recording = Recording(trace.transcript, trace.objective or "", CONTROLLERS.make(row["controller"]),
                          row["memory"], tools, window)
    encoder = ViewEncoder(trace.transcript)
    views = [encoder.encode(turn.view) for turn in replay(recording, MEMORIES.make(row["memory"]), window, env)]
    return views, encoder.pool
