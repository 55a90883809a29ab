"""Earlier tool output where a memory puts it, as the issues mind reads it.

Every memory shows old tool results in its own frame: ACG's decision view and the rolling summary
quote them line by line (``| ``, read by ``guidance.quoted_blocks``), MemGPT's conversation search
quotes them too, while LangGraph-store's retrieved items and MemGPT's archival passages hold the
raw text under a header line (``(memory from step 12, tool)``, ``(1) passage 3:``). ``segments``
finds a test run, a search result or a file region that starts anywhere but the first line of a
message, up to the next header; the mind reads each as a quotation, where the message sits. ACG
stores a search result's hits as units of their own, so a quoted block may be hits without their
header: ``hits`` reads ``path:line: def name(`` lines as where ``name`` is defined.

Dates. ACG names the step that produced each unit (``(E7 · step 12 · run_tests ...)``) and the
step of the view itself; LangGraph-store names an item's step (``(memory from step 12, tool)``) and
shows only items older than its recent window. ``dated_quotes`` and ``segments`` return those
steps, so the mind can place a remembered test run before or after an edit it sees.
"""

from __future__ import annotations

import re

from pushbench.guidance import ACG_EVIDENCE, ACG_VIEW, QUOTE_CUT, RETRIEVED_ITEM

_HEAD = re.compile(r'^(?:(?:checker|submit) \S+: (?:FAIL|rejected)|search_files ".*": \d+ matching|'
                   r"[\w./-]+ lines \d+-\d+ of \d+$)")
_FRAME = re.compile(r"^(?:\[memory\]|\| |\|$|\(\d+\) (?:passage \d+|step -?\d+, \w+):$)")
_HIT = re.compile(r"^([\w./-]+\.py):(\d+): (.*)$")
_DEF = re.compile(r"^(?:async\s+)?def\s+(\w+)\s*\(")


def segments(content: str) -> list[tuple[str, int | None]]:
    """Tool outputs held in a message after its first line, each up to the next header or quotation
    (a last line cut short by the memory, ending in " [...]", is dropped), with the step of the
    retrieved item that holds it (None: no item header names one)."""
    out: list[tuple[list[str], int | None]] = []
    current: list[str] | None = None
    step: int | None = None
    for line in content.splitlines()[1:]:
        if _HEAD.match(line):
            current = [line]
            out.append((current, step))
        elif m := RETRIEVED_ITEM.match(line):
            current, step = None, int(m.group(1))
        elif _FRAME.match(line):
            current, step = None, None
        elif current is not None:
            current.append(line)
    for segment, _ in out:
        if segment[-1].endswith(QUOTE_CUT) or segment[-1].endswith(" [...]"):
            segment.pop()
    return [("\n".join(s), at) for s, at in out if s]


def dated_quotes(content: str) -> tuple[int | None, dict[str, int]]:
    """An ACG decision view's step and, for each quoted block under an evidence header, the step that
    produced it (the view's own step for current-event evidence); (None, {}) for any other message.
    Blocks are the texts ``guidance.quoted_blocks`` gives, keyed by that text."""
    lines = content.splitlines()
    view = ACG_VIEW.match(lines[0]) if lines else None
    if view is None:
        return None, {}
    now = int(view.group(1))
    dates: dict[str, int] = {}
    at: int | None = None
    block: list[str] = []
    for line in [*lines[1:], ""]:
        if line == "|" or line.startswith("| "):
            block.append(line[2:])
            continue
        if block and at is not None:
            if block[-1].endswith(QUOTE_CUT):
                block.pop()
            if block:
                dates.setdefault("\n".join(block), at)
        block = []
        m = ACG_EVIDENCE.match(line)
        at = (now if m.group(2) == "current event" else int(m.group(2).split()[1])) if m else None
    return now, dates


def hits(block: str) -> list[tuple[str, str, int, str]]:
    """(query ``def name(``, path, line, text) for each line of a block made only of search hits that
    show a definition; [] for any other block."""
    lines = [line for line in block.splitlines() if line.strip()]
    found = [m for line in lines if (m := _HIT.match(line))]
    if not lines or len(found) != len(lines):
        return []
    out = []
    for m in found:
        if d := _DEF.match(m.group(3).strip()):
            out.append((f"def {d.group(1)}(", m.group(1), int(m.group(2)), m.group(3)))
    return out
