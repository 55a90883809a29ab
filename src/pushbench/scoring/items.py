"""Metrics of tool-call patterns a family names: repeated reads and status calls."""

from __future__ import annotations

from typing import Any


def repeated_searches(events: list[dict[str, Any]], tool: str = "search") -> int:
    """Calls of ``tool`` for a (query, page) already searched earlier in the episode."""
    seen: set[tuple[str, int]] = set()
    repeats = 0
    for call in events:
        args = call.get("args")
        if call.get("kind", "call") != "call" or call.get("tool") != tool or not call["ok"] or not isinstance(args, dict):
            continue
        key = (str(args.get("query", "")).strip().lower(), int(args.get("page", 1)))
        repeats += key in seen
        seen.add(key)
    return repeats


def tool_calls(events: list[dict[str, Any]], tool: str) -> int:
    """Successful calls of ``tool``."""
    return sum(1 for e in events if e["kind"] == "call" and e["tool"] == tool and e["ok"])
