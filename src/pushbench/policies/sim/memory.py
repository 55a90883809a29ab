"""SimLM's incremental reading of the context: facts with token offsets, parsed once per message.

The store is a cache over the message list: if the context keeps its prefix (the usual case) only
new messages are parsed; if a context builder rewrote earlier messages, the store is rebuilt from
scratch, so the result never depends on the cache.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from pushbench.tokens import count_message_tokens


class FactStore:
    """Append-only columns of facts; ``kind`` codes and meanings are the reader's."""

    def __init__(self) -> None:
        self.kind: list[int] = []
        self.offset: list[int] = []
        self.step: list[int] = []
        self.key: list[int] = []  # interned string (uid or query)
        self.aux: list[int] = []
        self.keys: dict[str, int] = {}
        self.names: list[str] = []
        self._arrays: dict[str, np.ndarray] = {}

    def intern(self, text: str) -> int:
        idx = self.keys.get(text)
        if idx is None:
            idx = self.keys[text] = len(self.names)
            self.names.append(text)
        return idx

    def add(self, kind: int, offset: int, step: int, key: str = "", aux: int = 0) -> None:
        self.kind.append(kind)
        self.offset.append(offset)
        self.step.append(step)
        self.key.append(self.intern(key))
        self.aux.append(aux)
        self._arrays.clear()

    def array(self, column: str) -> np.ndarray:
        arr = self._arrays.get(column)
        if arr is None:
            arr = self._arrays[column] = np.asarray(getattr(self, column), dtype=np.int64)
        return arr

    def __len__(self) -> int:
        return len(self.kind)


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
            self.total_tokens = count_message_tokens([], tools)
        for message in messages[n:]:
            offset = self.total_tokens
            self._parse(self, message, offset, self.assistant_turns)
            if message.get("role") == "assistant":
                self.assistant_turns += 1
            self.total_tokens += count_message_tokens([message]) - 3  # reply priming counted once
            self.seen.append(message)
