"""SimLM with MemGPT-style memory tools: what to write, when to search, how to summarise.

SimLM sees memory only as a real model would: tool schemas (``core_memory_*``, ``archival_memory_*``,
``conversation_search``), core memory blocks in the system prompt, search results and summaries as
messages. It writes notes in a plain line format that its RepoScan reader parses back as facts;
the notes, the memory's warning, blocks and statistics are forms of ``pushbench.guidance``, rendered
and parsed there (``note_facts``). Notes then go through the same bounded attention as everything
else, so a note at the top of a long context is recalled no better than any other old fact.

Behaviours (each taken with the profile's ``follow_guidance`` probability: the memory instructions in
the system prompt are guidance like any other):

- after a submit or status result, and on the memory-pressure warning: rewrite the ``progress`` block
  (``progress: N accepted of target T`` and the last queries' pages read). N is read from the block
  being edited (the model looks at the text it rewrites) plus the accepted verdicts just seen (misread
  verdicts included, per ``conflate``), or the verified count of a status result;
- after a submit result: archive the submitted ids (``submitted: a, b, ...``);
- before a submit, when archival memory holds passages: search it with the ids about to be submitted,
  so ids found there (already submitted) are dropped — the submitted set is what it is unsure of;
- asked to summarise evicted messages: list the facts it recalls from them, under its own bounded
  attention (lossy per profile): believed count, pages read, ids submitted.

On the work-unit families (DataOps-lite, SWE-lite; ``UnitMind``) the same skills keep unit notes:
the ``progress`` block holds the count, the units it recalls accepted (``submitted: U01, U03``) and
the listed units not accepted yet (``pending: U02, U04``); an accepted submit is archived
(``submitted: U01``); before a submit, when the archive holds passages, it searches it for the unit
(a unit found there was accepted: it moves on); a summary lists count, accepted and pending units.
The unit mind reads these notes back (``guidance.note_facts``) wherever they sit.

A mind that writes its own notes (``NoteMind``: the corpus mind, ``tasks/corpus/notes.py``) calls the
memory tools itself; a summary it writes starts with its notes. Other minds get the tools unused.
"""

from __future__ import annotations

import json
from typing import Any, Protocol, runtime_checkable

import numpy as np

from pushbench.guidance import (ARCHIVE_SIZE, PROGRESS_BLOCK, SUMMARY_CUE, WARNING_CUE, count_note, note_facts,
                                pending_note, read_note, submitted_note)
from pushbench.policies.base import Turn, text_message, tool_call_message, turn_from_message
from pushbench.policies.sim.attention import recalled_mask, stable_uniform
from pushbench.tokens import count_message_tokens, count_tokens

MEMORY_TOOLS = frozenset({"core_memory_append", "core_memory_replace", "archival_memory_insert",
                          "archival_memory_search", "conversation_search"})
MAX_READ_QUERIES = 6  # queries kept in the progress block's read line


def is_summary_request(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> bool:
    return (not tools and bool(messages) and messages[0].get("role") == "system"
            and bool(SUMMARY_CUE.search(str(messages[0].get("content") or ""))))


def offered(tools: list[dict[str, Any]]) -> bool:
    return {"core_memory_replace", "core_memory_append"} <= {t.get("function", {}).get("name") for t in tools}


# --- reading what memory and the transcript say ----------------------------------------------
def this_step(messages: list[dict[str, Any]]) -> tuple[dict[str, Any] | None, str, list[str]]:
    """The last external call, its result text, and the memory tools called since then."""
    since: list[str] = []
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        calls = (message.get("tool_calls") or []) if message.get("role") == "assistant" else []
        if not calls:
            continue
        name = calls[0].get("function", {}).get("name", "")
        if name in MEMORY_TOOLS:
            since.append(name)
            continue
        result = messages[i + 1].get("content") if i + 1 < len(messages) else ""
        return calls[0].get("function", {}), str(result or ""), since
    return None, "", since


def is_warned(messages: list[dict[str, Any]]) -> bool:
    """Is the newest message memgpt's memory-pressure warning?"""
    return bool(messages) and str(messages[-1].get("content") or "").startswith(WARNING_CUE)


def memgpt_block(messages: list[dict[str, Any]]) -> str | None:
    """The text of memgpt's ``progress`` core block in the system prompt, if it has one."""
    system = str(messages[0].get("content") or "") if messages else ""
    m = PROGRESS_BLOCK.search(system)
    return m.group(1) if m else None


def archive_size(messages: list[dict[str, Any]]) -> int:
    """How many passages memgpt's archival store holds, as its system prompt states."""
    m = ARCHIVE_SIZE.search(str(messages[0].get("content") or "")) if messages else None
    return int(m.group(1)) if m else 0


def _note_count(text: str) -> int:
    return max((f[2] for line in text.splitlines() for f in note_facts(line) if f[0] == "count"), default=0)


def _note_pages(text: str) -> dict[str, tuple[int, int]]:
    pages: dict[str, tuple[int, int]] = {}
    for line in text.splitlines():
        for kind, query, aux in note_facts(line):
            if kind == "page":
                pages[query] = (aux // 1000, aux % 1000)
    return pages


def recalled_pages(mind: Any, recalled: np.ndarray, pages: dict[str, tuple[int, int]]) -> dict[str, tuple[int, int]]:
    """``pages`` updated with the pages the mind recalls reading (most recent query last)."""
    rs, facts = mind.kinds, mind.reader.facts
    kind, key, aux = facts.array("kind"), facts.array("key"), facts.array("aux")
    out = dict(pages)
    for i in np.flatnonzero(recalled & ((kind == rs.PAGE) | (kind == rs.MEM_PAGE))):
        query = facts.names[int(key[i])]
        read = max(int(aux[i]) // 1000, out.get(query, (0, 0))[0])
        out.pop(query, None)
        out[query] = (read, int(aux[i]) % 1000)
    return out


def _read_line(pages: dict[str, tuple[int, int]], limit: int = MAX_READ_QUERIES) -> str:
    return read_note(list(pages.items())[-limit:])


def _recall(mind: Any) -> tuple[np.ndarray, int]:
    reader = mind.reader
    step = external_step(reader)
    return recalled_mask(mind.profile, reader.facts.array("offset"), reader.total_tokens, mind.seed, step), step


def external_step(reader: Any) -> int:
    return reader.assistant_turns - reader.state.get("memory_turns", 0)


@runtime_checkable
class UnitMind(Protocol):
    """A work-unit family's mind (``policies/sim/units.py``): its notes name units and the checker."""

    checker_tool: str


@runtime_checkable
class ItemMind(Protocol):
    """An item-set family's mind: ``kinds`` are the item kinds its facts and notes are kept under."""

    kinds: Any


@runtime_checkable
class NoteMind(Protocol):
    """A mind that writes its own memory notes (``guidance`` notes; the corpus mind): a summary it
    writes starts with ``memory_notes()``, taken from what its reader recalls."""

    def memory_notes(self) -> list[str]: ...


def notes_of(mind: object, messages: list[dict[str, Any]]) -> list[str]:
    """The notes a note-writing mind (a fresh instance) takes from ``messages``; [] for other minds."""
    if not isinstance(mind, NoteMind):
        return []
    mind.reader.update(messages, [])  # type: ignore[attr-defined]
    return mind.memory_notes()


def is_unit_mind(mind: object) -> bool:
    return isinstance(mind, UnitMind)


def is_item_mind(mind: object) -> bool:
    return isinstance(mind, ItemMind)


# --- deciding ---------------------------------------------------------------------------------
def act(mind: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Turn:
    """The mind's turn with memory tools offered: a memory call first when one is due."""
    mind.reader.update(messages, tools)
    if is_unit_mind(mind):
        return _unit_act(mind, messages, tools)
    goal = mind.reader.state.get("goal")
    if goal is None or not is_item_mind(mind):
        return mind.act(messages, tools)
    step = external_step(mind.reader)
    ext, result, since = this_step(messages)
    call_id = f"call_{step}_m{len(since) + 1}"
    follow = mind.profile.follow_guidance
    warned = is_warned(messages)
    noted = any(n.startswith("core_memory") for n in since)
    name = (ext or {}).get("name")
    fresh_result = result.startswith(("submit:", "status:"))
    if not noted and (warned or fresh_result) and stable_uniform(mind.seed, "mem-note", step) < follow:
        return _progress_note(mind, messages, goal.target, name, result, call_id)
    if (name == "submit" and result.startswith("submit:") and "archival_memory_insert" not in since
            and stable_uniform(mind.seed, "mem-archive", step) < follow):
        ids = [uid for uid in _submitted_ids(ext) if uid]
        if ids:
            return _call("archival_memory_insert", {"content": submitted_note(ids)}, call_id)
    turn = mind.act(messages, tools)
    if (turn.call is not None and turn.call.name == "submit" and archive_size(messages) > 0
            and "archival_memory_search" not in since
            and stable_uniform(mind.seed, "mem-search", step) < follow):
        ids = _submitted_ids({"arguments": turn.call.arguments})
        return _call("archival_memory_search", {"query": " ".join(ids)[:3_900]}, call_id)
    return turn


def _call(name: str, args: dict[str, Any], call_id: str) -> Turn:
    return turn_from_message(tool_call_message(name, args, call_id))


def _submitted_ids(fn: dict[str, Any] | None) -> list[str]:
    raw = (fn or {}).get("arguments") or "{}"
    try:
        ids = json.loads(raw).get("ids", []) if isinstance(raw, str) else raw.get("ids", [])
    except (json.JSONDecodeError, AttributeError):
        return []
    return [str(i) for i in ids] if isinstance(ids, list) else []


def _progress_note(mind: Any, messages: list[dict[str, Any]], target: int, name: str | None, result: str,
                   call_id: str) -> Turn:
    rs, facts = mind.kinds, mind.reader.facts
    recalled, _ = _recall(mind)
    kind, aux = facts.array("kind"), facts.array("aux")
    block = memgpt_block(messages) or ""
    believed = mind._believed_count(recalled, kind, aux)
    if name == "status" and (m := rs.STATUS_LINE.match(result)):
        count = int(m.group(1))  # the verified count, just read
    else:
        submits = np.flatnonzero(kind == rs.SUBMITTED)
        after = np.arange(len(kind)) > (int(submits[-1]) if len(submits) else -1)
        misread = ((kind == rs.REJECTED) | (kind == rs.DUPLICATE)) & (aux == 1)
        fresh = int((after & ((kind == rs.ACCEPTED) | misread)).sum()) if name == "submit" else 0
        count = max(believed, _note_count(block) + fresh)
    lines = [count_note(count, target)]
    read = _read_line(recalled_pages(mind, recalled, _note_pages(block)))
    if read:
        lines.append(read)
    new = "\n".join(lines)
    if block:
        return _call("core_memory_replace", {"label": "progress", "old_content": block, "new_content": new}, call_id)
    return _call("core_memory_append", {"label": "progress", "content": new}, call_id)


# --- summarising ------------------------------------------------------------------------------
def summarise(mind: Any, messages: list[dict[str, Any]]) -> Turn:
    """Answer a summary request with the facts recalled from it (``mind`` is a fresh instance of the
    episode's mind, or None when no turn of the episode came first)."""
    if mind is None:
        turn = Turn(text_message(f"I worked through {len(messages)} messages; I recall nothing specific."), None)
        turn.input_tokens = count_message_tokens(messages)
        turn.output_tokens = count_tokens(str(turn.message["content"]))
        return turn
    reader = mind.reader
    reader.update(messages, [])
    goal = reader.state.get("goal")
    if is_unit_mind(mind) and reader.state.get("target"):
        turn = Turn(text_message("\n".join(_unit_notes(mind, reader.state["target"]))), None)
    elif isinstance(mind, NoteMind) and (notes := mind.memory_notes()):
        turn = Turn(text_message("\n".join(notes)), None)
    elif goal is None or not is_item_mind(mind):
        turn = Turn(text_message(f"I worked through {len(messages)} messages; I recall nothing specific."), None)
    else:
        turn = Turn(text_message(_summary_text(mind, goal.target)), None)
    turn.input_tokens = reader.total_tokens
    turn.output_tokens = count_tokens(str(turn.message["content"]))
    return turn


def _summary_text(mind: Any, target: int) -> str:
    rs, facts = mind.kinds, mind.reader.facts
    recalled, _ = _recall(mind)
    kind, key, aux = facts.array("kind"), facts.array("key"), facts.array("aux")
    count = mind._believed_count(recalled, kind, aux)
    done_kinds = (kind == rs.SUBMITTED) | (kind == rs.ACCEPTED) | (kind == rs.REJECTED) | (kind == rs.DUPLICATE) \
        | (kind == rs.MEM_DONE)
    done = list(dict.fromkeys(facts.names[int(k)] for k in key[recalled & done_kinds]))
    lines = [count_note(count, target)]
    read = _read_line(recalled_pages(mind, recalled, {}), limit=10**6)
    if read:
        lines.append(read)
    if done:
        lines.append(submitted_note(done))
    return "\n".join(lines)


# --- work units -------------------------------------------------------------------------------
def _unit_act(mind: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Turn:
    """A work-unit mind's turn with memory tools: note progress, archive accepted units, search the
    archive before a submit (each per ``follow_guidance``), else the mind's own turn."""
    target = mind.reader.state.get("target")
    if not target:
        return mind.act(messages, tools)
    step = external_step(mind.reader)
    ext, result, since = this_step(messages)
    call_id = f"call_{step}_m{len(since) + 1}"
    follow = mind.profile.follow_guidance
    warned = is_warned(messages)
    noted = any(n.startswith("core_memory") for n in since)
    fresh_result = result.startswith(("submit ", "status:"))
    if not noted and (warned or fresh_result) and stable_uniform(mind.seed, "mem-note", step) < follow:
        new = "\n".join(_unit_notes(mind, target))
        block = memgpt_block(messages)
        if block:
            return _call("core_memory_replace", {"label": "progress", "old_content": block, "new_content": new}, call_id)
        return _call("core_memory_append", {"label": "progress", "content": new}, call_id)
    unit = _unit_of(ext)
    if (unit and result.startswith(f"submit {unit}: accepted") and "archival_memory_insert" not in since
            and stable_uniform(mind.seed, "mem-archive", step) < follow):
        return _call("archival_memory_insert", {"content": submitted_note([unit])}, call_id)
    turn = mind.act(messages, tools)
    if (turn.call is not None and turn.call.name == "submit" and archive_size(messages) > 0
            and "archival_memory_search" not in since and stable_uniform(mind.seed, "mem-search", step) < follow):
        unit = _unit_of({"arguments": turn.call.arguments})
        if unit:
            return _call("archival_memory_search", {"query": f"submitted: {unit}"}, call_id)
    return turn


def _unit_of(fn: dict[str, Any] | None) -> str:
    raw = (fn or {}).get("arguments") or "{}"
    try:
        args = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError:
        return ""
    return str(args.get("unit") or "") if isinstance(args, dict) else ""


def _unit_notes(mind: Any, target: int) -> list[str]:
    """Its unit notes from what it recalls now: count, accepted units, listed units not accepted."""
    from pushbench.policies.sim.unit_recall import ACCEPTED, DUPLICATE, PROGRESS, Recall

    recalled, step = _recall(mind)
    ctx = Recall(mind, recalled, step)
    accepted = sorted({u for kind in (ACCEPTED, DUPLICATE, PROGRESS) for u in ctx.units_of(kind)})
    lines = [count_note(ctx.believed_count(), target)]
    if accepted:
        lines.append(submitted_note(accepted))
    pending = [u for u in ctx.listed_units() if u not in accepted]
    if pending:
        lines.append(pending_note(pending))
    return lines
