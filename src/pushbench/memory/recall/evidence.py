"""Which evidence a recorded decision needed, known from the task, and when a view holds it.

A *decision* is a submit: RepoScan's and rows' ``submit(ids)``, a work unit's ``submit(unit)``.
Its *needed units* come from the observations before it (never from a model):

- item sets (``reposcan``, ``rows``), per submitted id: ``hit:<id>``, the search hit (RepoScan) or
  data row (rows) that showed the id, when one was shown; and ``verdict:<id>``, the latest earlier
  verdict on it, when there was one;
- work units (``dataops``, ``swe``): ``checker:<unit>``, the unit's last checker result, when the
  checker ran on it before.

An id or unit that nothing showed before the decision needs nothing (no evidence existed).

*Present* means the needed observation's identifying text appears in the rendered view (the text
content of its messages, with the ``| `` quotation marks of memory search results removed):

- a RepoScan hit: its header line ``[rank] <id>`` as search printed it (at any rank it was shown);
- a rows hit: a line that starts with ``<id>,`` (the row as rows() printed it);
- a verdict: the verdict word and the id on one line (``accepted  <id>``), as submit printed it;
- a checker result: its first two lines (``checker U01: PASS`` and the first detail line) as
  consecutive lines.

The rule is textual on purpose: a memory that keeps a paraphrase (a summary saying "submitted 12
ids") holds no identifying text, and gets no credit for it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Protocol

_QUOTE = re.compile(r"^\| ", re.M)
_REPOSCAN_HIT = re.compile(r"^\[\d+\] (\S+)$", re.M)
_ROW_HIT = re.compile(r"^(r\d{4}),", re.M)
_VERDICT = re.compile(r"^\s+(accepted|rejected|duplicate)\s+(\S+)$", re.M)


@dataclass(frozen=True)
class Seen:
    """One observation before a decision: its step, the tool that produced it, its text."""

    step: int
    tool: str | None
    text: str


@dataclass(frozen=True)
class Needed:
    unit: str  # e.g. "hit:tests/x.py::test_a", "verdict:...", "checker:U01"
    pattern: re.Pattern[str]  # found in the view text <=> the unit is present

    def present(self, view_text: str) -> bool:
        return self.pattern.search(view_text) is not None


class EvidenceRule(Protocol):
    def needed(self, tool: str, arguments: Any, history: list[Seen]) -> list[Needed] | None:
        """The needed units of a call, or None when the call is not a decision."""
        ...


def view_text(messages: list[dict[str, Any]]) -> str:
    """The text a view shows: every message's text content, memory quotation marks removed."""
    parts = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):  # content parts
            content = "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        if content:
            parts.append(str(content))
    return _QUOTE.sub("", "\n".join(parts))


class ItemRule:
    """Item-set families: a submit needs, per id, the hit that showed it and its latest verdict."""

    def __init__(self, hits: re.Pattern[str], hit_pattern: str):
        self.hits = hits  # group 1: an id shown as a hit
        self.hit_pattern = hit_pattern  # format with id=<escaped id>: the hit's identifying text

    def needed(self, tool: str, arguments: Any, history: list[Seen]) -> list[Needed] | None:
        if tool != "submit":
            return None
        ids = arguments.get("ids") if isinstance(arguments, dict) else None
        if not isinstance(ids, list):
            return []
        shown: set[str] = set()
        verdicts: dict[str, str] = {}
        for seen in history:
            clean = _QUOTE.sub("", seen.text)
            shown.update(self.hits.findall(clean))
            if seen.tool == "submit":
                verdicts.update((item, verdict) for verdict, item in _VERDICT.findall(clean))
        out: list[Needed] = []
        for item in dict.fromkeys(i for i in ids if isinstance(i, str)):
            escaped = re.escape(item)
            if item in shown:
                out.append(Needed(f"hit:{item}", re.compile(self.hit_pattern.format(id=escaped), re.M)))
            if item in verdicts:
                out.append(Needed(f"verdict:{item}", re.compile(rf"{verdicts[item]}\s+{escaped}$", re.M)))
        return out


class UnitRule:
    """Work-unit families: a unit's submit needs the unit's last checker result."""

    def needed(self, tool: str, arguments: Any, history: list[Seen]) -> list[Needed] | None:
        if tool != "submit":
            return None
        unit = arguments.get("unit") if isinstance(arguments, dict) else None
        if not isinstance(unit, str) or not unit:
            return []
        head = f"checker {unit}: "
        last = next((s for s in reversed(history) if s.text.startswith(head)), None)
        if last is None:
            return []
        lines = last.text.split("\n")[:2]
        return [Needed(f"checker:{unit}", re.compile(r"\n".join(re.escape(line) for line in lines)))]


RULES: dict[str, EvidenceRule] = {
    "reposcan": ItemRule(_REPOSCAN_HIT, r"\[\d+\] {id}$"),
    "rows": ItemRule(_ROW_HIT, r"^{id},"),
    "dataops": UnitRule(),
    "swe": UnitRule(),
}
