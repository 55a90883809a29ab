"""SimLM's incremental reading of the context: facts with token offsets, parsed once per message.

The store is a cache over the message list: if the context keeps its prefix (the usual case) only
new messages are parsed; if a context builder rewrote earlier messages, the store is rebuilt from
scratch, so the result never depends on the cache.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from pushbench.tokens import count_message_tokens


class Mind:
    """The base of a family's SimLM mind: a profile, the episode seed and a reader that parses each
    new message into facts (``_parse``, the family's own). ``act(messages, tools)`` is the family's."""

    def __init__(self, profile: Any, seed: int):
        self.profile = profile
        self.seed = seed
        self.reader = ContextReader(self._parse)

    def _parse(self, reader: "ContextReader", message: dict[str, Any], offset: int, step: int) -> None:
        raise NotImplementedError  # pragma: no cover - every family's mind parses its own messages


class FactStore:
    """Append-only columns of facts (numpy, grown by doubling); ``kind`` codes are the reader's."""

    COLUMNS = ("kind", "offset", "step", "key", "aux")

    def __init__(self, capacity: int = 256) -> None:
        self._data = {c: np.zeros(capacity, dtype=np.int64) for c in self.COLUMNS}
        self.size = 0
        self.keys: dict[str, int] = {}
        self.names: list[str] = []

    def intern(self, text: str) -> int:
        idx = self.keys.get(text)
        if idx is None:
            idx = self.keys[text] = len(self.names)
            self.names.append(text)
        return idx

    def add(self, kind: int, offset: int, step: int, key: str = "", aux: int = 0) -> None:
        if self.size == len(self._data["kind"]):
            self._data = {c: np.concatenate([a, np.zeros_like(a)]) for c, a in self._data.items()}
        i = self.size
        data = self._data
        data["kind"][i], data["offset"][i], data["step"][i] = kind, offset, step
        data["key"][i], data["aux"][i] = self.intern(key), aux
        self.size += 1

    def array(self, column: str) -> np.ndarray:
        return self._data[column][: self.size]

    def __len__(self) -> int:
        return self.size


class ContextReader:
    """Keeps a FactStore in step with a growing message list."""

    def __init__(self, parse: Callable[["ContextReader", dict[str, Any], int, int], None]):
        self._parse = parse
        self.reset()

    def reset(self) -> None:
        self.facts = FactStore()
        self.seen: list[dict[str, Any]] = []
        self.total_tokens = 0
        self.assistant_turns = 0
        self.state: dict[str, Any] = {}

    def update(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> None:
        n = len(self.seen)
        if len(messages) < n or messages[:n] != self.seen:
            self.reset()
            n = 0
        if n == 0:  # a fresh or rebuilt reading starts after the tool schemas
            self.total_tokens = count_message_tokens([], tools)
        for message in messages[n:]:
            offset = self.total_tokens
            self._parse(self, message, offset, self.assistant_turns)
            if message.get("role") == "assistant":
                self.assistant_turns += 1
            self.total_tokens += count_message_tokens([message]) - 3  # reply priming counted once
            self.seen.append(message)
