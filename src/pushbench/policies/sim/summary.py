"""SimLM answering a rolling-summary request (``memory/summary.py``) with what it recalls.

The request is ``[system (guidance.SUMMARY_SYSTEM), task, earlier summary?, history..., request]``
and its last message names a size (``guidance.SUMMARY_LIMIT``). A mind with memory skills (RepoScan)
writes its structured notes (``memory_skills.summarise``). Any other mind quotes what it recalls (a
note-writing mind, ``memory_skills.NoteMind``, puts its notes first, within the size):
each turn of the history (a call, a tool result, a controller note) and each quotation of an earlier
summary is one piece of evidence at its token offset, recalled under the profile's bounded attention
(``attention.recalled_mask``) as any fact is. The recalled pieces are quoted with ``| `` so its later
self reads them back where the summary sits (``guidance.quoted_blocks``), newest first until the
size is reached, then in their original order. What it failed to recall, or what did not fit, is
not in the summary.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from pushbench.guidance import SUMMARY_LIMIT, quoted, quoted_blocks
from pushbench.policies.base import Turn, text_message
from pushbench.policies.sim.attention import recalled_mask
from pushbench.tokens import count_message_tokens, count_tokens

CALL_CHARS = 300  # a recalled call is quoted as one line of at most this many characters
TOOL_RESULT = "Tool result:"  # memgpt.plain's header of a tool result in a summary request
SALT = 7_919  # keeps the summary's attention draws apart from the turns' (recalled_mask's step)


def size_limit(messages: list[dict[str, Any]]) -> int | None:
    """The summary size the request asks for (tokens), or None when it names none."""
    last = str(messages[-1].get("content") or "") if messages else ""
    m = SUMMARY_LIMIT.match(last)
    return int(m.group(1)) if m else None


def pieces(message: dict[str, Any]) -> list[tuple[int, str]]:
    """The evidence in one history message: (character position, unquoted text) pieces."""
    content = str(message.get("content") or "")
    if message.get("role") == "assistant":
        return [(0, content.splitlines()[0][:CALL_CHARS])] if content.strip() else []
    if any(line == "|" or line.startswith("| ") for line in content.splitlines()):
        found, at = [], 0  # an earlier summary: each quotation is a piece; its framing lines are not
        for block in quoted_blocks(content):
            at = max(content.find("| " + block.split("\n", 1)[0], at), 0)
            found.append((at, block))
        return found
    if content.startswith(TOOL_RESULT):
        content = content[len(TOOL_RESULT):].lstrip("\n")
    return [(0, content)] if content.strip() else []


def quoted_summary(profile: Any, seed: int, messages: list[dict[str, Any]], notes: Sequence[str] = ()) -> Turn:
    history = messages[2:-1]  # after the system message and the task, before the request
    offset = count_message_tokens(messages[:2])
    found: list[tuple[int, str]] = []
    for message in history:
        content = str(message.get("content") or "")
        for at, text in pieces(message):
            found.append((offset + count_tokens(content[:at]), text))
        offset += count_message_tokens([message]) - 3
    total = count_message_tokens(messages)
    offsets = np.array([o for o, _ in found], dtype=np.int64)
    recalled = recalled_mask(profile, offsets, total, seed, SALT + len(messages)) if len(found) else offsets > 0
    limit = size_limit(messages) or total
    kept: list[str] = []
    head = "\n".join(notes)  # a note-writing mind's own notes (memory_skills.notes_of), before the quotations
    used = count_tokens(head) + 1 if head else 0
    for (_, text), keep in zip(reversed(found), reversed(recalled.tolist())):
        block = "\n".join(quoted(line) if line else "|" for line in text.split("\n"))
        cost = count_tokens(block) + 1
        if keep and used + cost <= limit:
            kept.append(block)
            used += cost
    body = "\n\n".join([head] * bool(head) + list(reversed(kept))) or \
        f"I recall nothing specific from the {len(history)} messages."
    turn = Turn(text_message(body), None)
    turn.input_tokens = total
    turn.output_tokens = count_tokens(body)
    return turn


__all__ = ["quoted_summary", "size_limit"]
