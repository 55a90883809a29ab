"""Context builders, registered by name in ``pushbench.registry.MEMORIES`` (each imported only when
used: ``memgpt`` and ``langgraph-store`` pull in heavier libraries)."""

from __future__ import annotations

from pushbench.memory.base import ContextBuilder, Event
from pushbench.registry import MEMORIES


def make_memory(name: str) -> ContextBuilder:
    return MEMORIES.make(name)


__all__ = ["MEMORIES", "ContextBuilder", "Event", "make_memory"]
