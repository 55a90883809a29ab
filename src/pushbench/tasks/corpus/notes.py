"""The corpus mind's memory notes, and when it writes and searches them with memgpt's tools.

Notes are ``guidance`` notes, so every memory carries them the same way: a ``read`` note lists the
searches it recalls running (each one page: a search shows its top documents at once) and a
``pending`` note the candidates no recalled clue rules out, each with the document that made it a
candidate (``noted_item``). A summary (rolling or memgpt's) starts with them; with memgpt's
tools offered (each memory call taken with the profile's ``follow_guidance``, as the memgpt rules
in the system prompt are guidance like any other):

- on the memory-pressure warning (memgpt's "memory pressure" message): rewrite the ``progress``
  block with them and archive them. Only then: a note after every search costs a turn and re-draws
  recall at each step, which lost more short questions than the notes saved (sim/base's memgpt
  success on the short corpus run fell from 0.316 to 0.196 when notes followed every search);
- before running a head clue's search, when archival memory holds passages: search it with the query
  (a passage found there names the candidates that search gave).

The mind reads its notes back wherever they sit (``CorpusMind._read_notes``), under the same bounded
attention as every other fact.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from pushbench.guidance import note_facts, pending_note, read_note
from pushbench.policies.base import Turn, tool_call_message, turn_from_message
from pushbench.policies.sim.attention import stable_uniform
from pushbench.policies.sim.memory_skills import archive_size, is_warned, memgpt_block, this_step
from pushbench.tasks.corpus.reader import HEAD_KINDS, clue_query

if TYPE_CHECKING:
    from pushbench.tasks.corpus.plan import Plan

NOTED_ITEM = re.compile(r"^(d[0-9a-f]{10}) (.+?)(?: \((\d{4})\))?$")  # a pending unit: doc, candidate (year)
MAX_QUERIES = 8  # searches kept in a read note besides the head clues' (a core block holds 2,000 characters)
MAX_CANDIDATES = 10  # candidates kept in a pending note (a head search shows 5 documents)


def notes(plan: "Plan", queries: list[str], block: str = "") -> list[str]:
    """The notes of what ``plan`` recalls: searches run (head clues' first), candidates in play. When
    it rewrites a block it looks at the text it replaces: the block's searches stay, and so do its
    candidates, unless one is a candidate it recalls now and a recalled clue rules it out."""
    old_queries, old_items = [], []
    for line in block.splitlines():
        for kind, key, _ in note_facts(line):
            if kind == "page":
                old_queries.append(key)
            elif kind == "pending" and (m := NOTED_ITEM.match(key)):
                old_items.append((m.group(2), m.group(1), m.group(3)))
    queries = list(dict.fromkeys(old_queries + queries))
    heads = {clue_query(c, None, plan.module) for c in plan.clues.values() if c.kind in HEAD_KINDS}
    kept = [q for q in queries if q in heads] + [q for q in queries if q not in heads][-MAX_QUERIES:]
    lines = [read_note((q, (1, 1)) for q in kept)] if kept else []
    recalled = set(plan.candidates())
    fresh = plan.open_candidates()
    items = [*(item for item in old_items if item[0] not in recalled), *fresh]
    unique: dict[str, str] = {}
    for name, doc, year in items:
        unique.setdefault(name, noted_item(doc, name, year))
    if unique:
        lines.append(pending_note(list(unique.values())[:MAX_CANDIDATES]))
    return lines


def noted_item(doc_id: str, candidate: str, year: str | None) -> str:
    """A candidate in play as a pending unit: the document that made it one, its name and, for a
    release, its year (what a later check of it searches with)."""
    return f"{doc_id} {candidate}" + (f" ({year})" if year else "")


def _call(name: str, args: dict[str, Any], call_id: str) -> Turn:
    return turn_from_message(tool_call_message(name, args, call_id))


def _serves_head(call: dict[str, Any] | None, plan: "Plan") -> bool:
    try:
        args = json.loads((call or {}).get("arguments") or "{}")
    except (json.JSONDecodeError, TypeError):
        return False
    clue = plan.clues.get(args.get("requirement", "")) if isinstance(args, dict) else None
    return (call or {}).get("name") == "search" and clue is not None and clue.kind in HEAD_KINDS


def due_memory_call(seed: int, follow: float, plan: "Plan", queries: list[str], messages: list[dict[str, Any]],
                    step: int) -> Turn | None:
    """A note to write now (progress block, archive), or None."""
    _, _, since = this_step(messages)
    call_id = f"call_{step}_m{len(since) + 1}"
    warned = is_warned(messages)
    block = memgpt_block(messages)
    text = "\n".join(notes(plan, queries, block or ""))
    if not text:
        return None
    if not warned and not any(name.startswith("core_memory") for name in since):  # only under memory pressure
        return None
    if not since and stable_uniform(seed, "mem-note", step) < follow:
        if block and block != text:
            return _call("core_memory_replace", {"label": "progress", "old_content": block, "new_content": text}, call_id)
        if not block:
            return _call("core_memory_append", {"label": "progress", "content": text}, call_id)
    if "archival_memory_insert" not in since and "pending: " in text and stable_uniform(seed, "mem-archive", step) < follow:
        return _call("archival_memory_insert", {"content": text}, call_id)
    return None


def archive_first(seed: int, follow: float, plan: "Plan", action: tuple[str, Any], messages: list[dict[str, Any]],
                  step: int) -> Turn | None:
    """Before a head clue's search: search the archive for it (when it holds passages), or None."""
    name, args = action
    _, _, since = this_step(messages)
    if (name == "search" and _serves_head({"name": name, "arguments": json.dumps(args)}, plan)
            and archive_size(messages) > 0 and "archival_memory_search" not in since
            and stable_uniform(seed, "mem-search", step) < follow):
        return _call("archival_memory_search", {"query": args["query"]}, f"call_{step}_m{len(since) + 1}")
    return None
