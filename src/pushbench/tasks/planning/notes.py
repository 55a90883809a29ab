"""The planning mind's memgpt notes: what it writes into core and archival memory, and when it searches.

Its notes are quotations (``guidance.quoted``) of the tool-result lines it needs later, which its
reader takes back as items wherever they sit (``mind.py``). Each behaviour is taken with the
profile's ``follow_guidance`` (the memory instructions are guidance like any other):

- after a ``user_info`` result, or on the memory warning: rewrite the ``progress`` block with the
  user's line and the lines of the items and coupons it recalls in its cart or plan (the newest
  that fit the block's limit, read from the block's header);
- on the memory warning (older messages are about to be evicted): archive, as one passage, the
  lines of every item it recalls (search hits, details, coupons, the user);
- before a catalog search, when archival memory holds passages: search it with the search's
  filter values, so items it archived earlier come back without spending an action.

Notes cost turns and context, which bounded recall pays for (and each turn is another decision,
with its own recall draws); so notes are written when the profile is read and under memory
pressure, not after every result or edit.
"""

from __future__ import annotations

from typing import Any

from pushbench.guidance import CORE_BLOCK, WARNING_CUE, quoted
from pushbench.policies.base import Turn, tool_call_message, turn_from_message
from pushbench.policies.sim.attention import stable_uniform
from pushbench.policies.sim.memory_skills import MEMORY_TOOLS, archive_size, memgpt_block, this_step
from pushbench.tasks.planning.planner import ADDED, COUPON_ON, ITEM


def memory_turn(mind: Any, messages: list[dict[str, Any]], seen: list[tuple[int, str, int, int]], step: int,
                action: str, args: dict[str, Any]) -> Turn | None:
    """A memory call due before ``action`` (the planner's next call), or None."""
    ext, result, since = this_step(messages)
    call_id = f"call_{step}_m{len(since) + 1}"
    follow = mind.profile.follow_guidance
    warned = _warned(messages)
    fresh = result.startswith("user ")
    if (warned or (ext and fresh)) and not any(n.startswith("core_memory") for n in since) \
            and stable_uniform(mind.seed, "mem-note", step) < follow:
        if (turn := _progress(mind, messages, seen, call_id)) is not None:
            return turn
    if warned and "archival_memory_insert" not in since and stable_uniform(mind.seed, "mem-archive", step) < follow:
        items = mind.reader.state.get("items", {})
        lines = [quoted(items[key]["line"]) for kind, key, _, _ in seen
                 if kind == ITEM and "line" in items.get(key, {})]
        if lines:
            return _call("archival_memory_insert", {"content": "\n".join(dict.fromkeys(lines))}, call_id)
    if (action == "search" and archive_size(messages) > 0 and "archival_memory_search" not in since
            and stable_uniform(mind.seed, "mem-search", step) < follow):
        words = [str(v) for k, v in sorted(args.items()) if k not in ("page", "sort", "requirement") and v]
        return _call("archival_memory_search", {"query": " ".join(words)[:400]}, call_id)
    return None


def _progress(mind: Any, messages: list[dict[str, Any]], seen: list[tuple[int, str, int, int]], call_id: str) -> Turn | None:
    items = mind.reader.state.get("items", {})
    recalled = {key for kind, key, _, _ in seen if kind == ITEM}
    held = [key.split("|")[0] for kind, key, _, _ in seen if kind in (ADDED, COUPON_ON)]
    keys = list(dict.fromkeys(k for k in ["user", *held] if k in recalled and "line" in items.get(k, {})))
    lines = [quoted(items[k]["line"]) for k in keys]
    block = memgpt_block(messages) or ""
    limit = _limit(messages)
    while lines and len("\n".join(lines)) > limit:
        lines.pop(1 if len(lines) > 1 and keys[0] == "user" else 0)  # the oldest item goes first, the user stays
    new = "\n".join(lines)
    if not new or new == block:
        return None
    if block:
        return _call("core_memory_replace", {"label": "progress", "old_content": block, "new_content": new}, call_id)
    return _call("core_memory_append", {"label": "progress", "content": new}, call_id)


def _warned(messages: list[dict[str, Any]]) -> bool:
    """Is there a memory warning since its last external call (its own memory calls in between)?"""
    for message in reversed(messages):
        if str(message.get("content") or "").startswith(WARNING_CUE):
            return True
        calls = (message.get("tool_calls") or []) if message.get("role") == "assistant" else []
        if any(c.get("function", {}).get("name") not in MEMORY_TOOLS for c in calls):
            return False
    return False


def _limit(messages: list[dict[str, Any]]) -> int:
    system = str(messages[0].get("content") or "") if messages else ""
    return next((int(m.group(3)) for m in CORE_BLOCK.finditer(system) if m.group(1) == "progress"), 2_000)


def _call(name: str, args: dict[str, Any], call_id: str) -> Turn:
    return turn_from_message(tool_call_message(name, args, call_id))
