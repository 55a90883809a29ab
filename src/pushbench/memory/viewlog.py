"""The context a model was sent each turn, kept as references so thousands of views cost little.

A view is a list of segments: ``[RANGE, first, last]`` (transcript indices, inclusive) or
``[POOL, k]`` (the k-th message a builder made itself: a system prompt with memory blocks, a
summary, ACG's decision view). The backends record the view of every external turn as the run goes
(``ViewLog``, written into the trace as ``views``); the viewer rebuilds the same segments by
replaying a transcript that has none (``replay.recall.replay``).
"""

from __future__ import annotations

import json
from typing import Any

RANGE, POOL = 0, 1  # view segment kinds: [RANGE, first, last] transcript indices; [POOL, k]


class ViewEncoder:
    """Encodes views against one transcript; the pool collects the builder's own messages.

    A builder shows the same message objects turn after turn (its head, a kept summary) and never
    edits a message it returned, so each object's pool index is found once, not dumped every turn
    (the object is held, so its id is not reused)."""

    def __init__(self, transcript: list[dict[str, Any]]):
        self.transcript = transcript
        self.pool: list[dict[str, Any]] = []
        self._where: dict[int, int] = {}
        self._indexed = 0
        self._pooled: dict[str, int] = {}
        self._seen: dict[int, tuple[dict[str, Any], int]] = {}

    def encode(self, view: list[dict[str, Any]]) -> list[list[int]]:
        for i in range(self._indexed, len(self.transcript)):  # the transcript only grows
            self._where[id(self.transcript[i])] = i
        self._indexed = len(self.transcript)
        segments: list[list[int]] = []
        for message in view:
            index = self._where.get(id(message))
            if index is not None:
                last = segments[-1] if segments else None
                if last and last[0] == RANGE and last[2] == index - 1:
                    last[2] = index
                else:
                    segments.append([RANGE, index, index])
                continue
            segments.append([POOL, self._pool_index(message)])
        return segments

    def _pool_index(self, message: dict[str, Any]) -> int:
        known = self._seen.get(id(message))
        if known is None:
            key = json.dumps(message, sort_keys=True, default=str)
            if key not in self._pooled:
                self._pooled[key] = len(self.pool)
                self.pool.append(message)
            known = self._seen[id(message)] = (message, self._pooled[key])
        return known[1]


class ViewLog:
    """The views of one episode's external turns, in order (``record`` once per external turn)."""

    def __init__(self, transcript: list[dict[str, Any]]):
        self._encoder = ViewEncoder(transcript)
        self.segments: list[list[list[int]]] = []

    def record(self, view: list[dict[str, Any]]) -> None:
        self.segments.append(self._encoder.encode(view))

    def as_trace(self) -> dict[str, Any]:
        return {"segments": self.segments, "pool": self._encoder.pool}


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
