"""The context-builder contract: every event goes in with its origin; each step a view comes out.

A builder sees the whole episode as events (the task, each action, each observation, with the
step and tool that produced it) and renders the messages the policy sees under a token budget.
``full`` is the plain transcript; memories such as MemGPT-style blocks or a source-grounded graph
implement the same three methods.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass
class Event:
    step: int
    kind: str  # "action" | "observation" | "note"
    message: dict[str, Any]  # the chat message this event contributes
    origin: dict[str, Any] = field(default_factory=dict)  # tool, arguments, call id, controller


class ContextBuilder(Protocol):
    name: str

    def start(self, system: str, task: str) -> None: ...

    def ingest(self, event: Event) -> None: ...

    def render(self, budget_tokens: int) -> list[dict[str, Any]]: ...
