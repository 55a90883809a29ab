"""``full``: the whole transcript, trimmed from the oldest turn to fit the model's window."""

from __future__ import annotations

from typing import Any

from pushbench.memory.base import Event
from pushbench.tokens import count_message_tokens

TRIM_SLACK = 0.3  # trim 30% of the window below the limit at once (as MemGPT evicts ~30%), so the prefix stays stable between trims


def _cost(message: dict[str, Any]) -> int:
    return count_message_tokens([message]) - 3


def _bound(message: dict[str, Any]) -> int | None:
    """An upper bound of ``_cost``: its texts' UTF-8 bytes (an o200k token is at least one byte).
    None for a message of any other shape (it is counted at once, as before)."""
    content = message.get("content")
    if (content is not None and not isinstance(content, str)) or message.get("function_call"):
        return None
    try:
        total = len(content.encode()) if content else 0
        for call in message.get("tool_calls") or ():
            fn = call.get("function") or call
            name, arguments = fn.get("name") or "", fn.get("arguments") or ""
            if not isinstance(name, str) or not isinstance(arguments, str):
                return None
            total += len(name.encode()) + len(arguments.encode())
    except (AttributeError, UnicodeEncodeError):
        return None
    return total


class FullContext:
    name = "full"

    def start(self, system: str, task: str) -> None:
        self.head = [{"role": "system", "content": system}, {"role": "user", "content": task}]
        self.head_tokens = count_message_tokens(self.head)
        self.messages: list[dict[str, Any]] = []
        # Messages are counted exactly only once the shown ones might not fit: until then a
        # message's entry is None and shown_tokens adds its byte bound (the same trims either way).
        self.tokens: list[int | None] = []
        self.counted = 0  # tokens[:counted] are exact
        self.first = 0  # index of the oldest message still shown
        self.shown_tokens = 0  # tokens of messages[first:], exact when counted == len(messages)
        self.view: list[dict[str, Any]] = list(self.head)

    def ingest(self, event: Event) -> None:
        self.messages.append(event.message)
        bound = _bound(event.message)
        if bound is None:
            cost = _cost(event.message)
            self.tokens.append(cost)
            self.shown_tokens += cost
        else:
            self.tokens.append(None)
            self.shown_tokens += bound
        self.view.append(event.message)

    def render(self, budget_tokens: int) -> list[dict[str, Any]]:
        room = budget_tokens - self.head_tokens
        if self.shown_tokens > room:
            self._count()
        if self.shown_tokens > room:
            goal = room - int(TRIM_SLACK * budget_tokens)
            while self.first < len(self.messages) and self.shown_tokens > goal:
                self._drop_turn()
            self.view = self.head + self.messages[self.first:]
        return self.view

    def _count(self) -> None:
        """Replace every byte bound by the exact count (messages before ``first`` are counted already)."""
        for i in range(self.counted, len(self.messages)):
            if self.tokens[i] is None:
                cost = _cost(self.messages[i])
                self.shown_tokens += cost - _bound(self.messages[i])  # type: ignore[operator]
                self.tokens[i] = cost
        self.counted = len(self.messages)

    def _drop_turn(self) -> None:
        """Drop the oldest assistant message with the replies that answer it."""
        self.shown_tokens -= self.tokens[self.first]  # type: ignore[operator]
        self.first += 1
        while self.first < len(self.messages) and self.messages[self.first].get("role") != "assistant":
            self.shown_tokens -= self.tokens[self.first]  # type: ignore[operator]
            self.first += 1
