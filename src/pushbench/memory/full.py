"""``full``: the whole transcript, trimmed from the oldest turn to fit the model's window."""

from __future__ import annotations

from typing import Any

from pushbench.memory.base import Event
from pushbench.tokens import count_message_tokens

TRIM_SLACK = 0.3  # trim 30% of the window below the limit at once (as MemGPT evicts ~30%), so the prefix stays stable between trims


class FullContext:
    name = "full"

    def start(self, system: str, task: str) -> None:
        self.head = [{"role": "system", "content": system}, {"role": "user", "content": task}]
        self.head_tokens = count_message_tokens(self.head)
        self.messages: list[dict[str, Any]] = []
        self.tokens: list[int] = []
        self.first = 0  # index of the oldest message still shown
        self.shown_tokens = 0
        self.view: list[dict[str, Any]] = list(self.head)

    def ingest(self, event: Event) -> None:
        self.messages.append(event.message)
        cost = count_message_tokens([event.message]) - 3
        self.tokens.append(cost)
        self.shown_tokens += cost
        self.view.append(event.message)

    def render(self, budget_tokens: int) -> list[dict[str, Any]]:
        room = budget_tokens - self.head_tokens
        if self.shown_tokens > room:
            goal = room - int(TRIM_SLACK * budget_tokens)
            while self.first < len(self.messages) and self.shown_tokens > goal:
                self._drop_turn()
            self.view = self.head + self.messages[self.first:]
        return self.view

    def _drop_turn(self) -> None:
        """Drop the oldest assistant message with the replies that answer it."""
        self.shown_tokens -= self.tokens[self.first]
        self.first += 1
        while self.first < len(self.messages) and self.messages[self.first].get("role") != "assistant":
            self.shown_tokens -= self.tokens[self.first]
            self.first += 1
