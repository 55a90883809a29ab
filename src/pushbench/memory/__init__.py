"""Context builders by name."""

from __future__ import annotations

from typing import Callable

from pushbench.memory.base import ContextBuilder, Event
from pushbench.memory.full import FullContext


def _memgpt() -> ContextBuilder:
    from pushbench.memory.memgpt import MemGPTMemory  # only when used: keeps agent processes quick to start

    return MemGPTMemory()


def _langgraph_store() -> ContextBuilder:
    from pushbench.memory.langgraph_store import LangGraphStoreMemory  # imports langgraph: only when used

    return LangGraphStoreMemory()


MEMORIES: dict[str, Callable[[], ContextBuilder]] = {"full": FullContext, "memgpt": _memgpt,
                                                     "langgraph-store": _langgraph_store}


def make_memory(name: str) -> ContextBuilder:
    if name not in MEMORIES:
        raise KeyError(f"unknown memory {name!r}; known: {', '.join(MEMORIES)}")
    return MEMORIES[name]()


__all__ = ["MEMORIES", "ContextBuilder", "Event", "make_memory"]
