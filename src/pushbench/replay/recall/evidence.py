"""Which evidence a recorded decision needed, known from the task, and when a view holds it.

A *decision* is a submit (RepoScan's and rows' ``submit(ids)``, a work unit's ``submit(unit)``,
planning's ``submit()``) or corpus's ``answer(text)``. Its *needed units* come from the task text
and the observations before it (never from a model or data/hidden):

- item sets (``reposcan``, ``rows``), per submitted id: ``hit:<id>``, the search hit (RepoScan) or
  data row (rows) that showed the id, when one was shown; and ``verdict:<id>``, the latest earlier
  verdict on it, when there was one;
- work units (``dataops``, ``swe``, ``sweissues``: its one issue ``I01`` is the unit):
  ``checker:<unit>``, the unit's last checker result, when the checker ran on it before;
- ``planning``, per item of the submitted cart or plan (rebuilt from the confirmations of the
  edits before it: ``cart: added 3 x P0171``, ``plan: removed H012 from day 1``, ``cart: coupon
  C03 applied`` ...; refused edits confirm nothing): ``item:<id>``, the line search, details or
  coupons printed for it (its price, stock, origin, times, opening hours: the facts every
  requirement on it is judged by), with a hotel's ``free nights`` line when one followed;
- ``corpus``: ``entity:<name>``, a search hit or opened page whose title names the answered entity
  (its docstring document, or a changelog item of the answered release; names compared as the
  verifier normalises answers); and per clue of the task text, ``clue:<k>``, the opened pages of
  the documents that show the clue for that entity by the reader's own rule
  (``tasks.corpus.reader.supports``, the rule the questions were proven unique with; a module clue
  is about a dotted prefix of the name). Search snippets are not pages and count only as the
  entity's title.

An id or unit that nothing showed before the decision needs nothing (no evidence existed).

*Present* means the needed observation's identifying text appears in the rendered view (the text
content of its messages, with the ``| `` quotation marks of memory search results removed):

- a RepoScan hit: its header line ``[rank] <id>`` as search printed it (at any rank it was shown);
- a rows hit: a line that starts with ``<id>,`` (the row as rows() printed it);
- a verdict: the verdict word and the id on one line (``accepted  <id>``), as submit printed it;
- a checker result: its first two lines (``checker U01: PASS`` and the first detail line) as
  consecutive lines;
- a planning item: its whole line as a tool printed it (any of the forms it was shown in);
- a corpus entity: a header line naming it, ``[rank] <doc> | <title>`` or ``document <doc> |
  <title> | page p of n``; a clue: one of its pages' header line and first text line, consecutive.

The rule is textual on purpose: a memory that keeps a paraphrase (a summary saying "submitted 12
ids", "added the white headphones") holds no identifying text, and gets no credit for it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Protocol

from pushbench.tasks.corpus.answers import normalise
from pushbench.tasks.corpus.reader import (CLUE_LINE, DOCSTRING_TITLE, Clue, base_title, parse_clue, release_of,
                                           supports)

_QUOTE = re.compile(r"^\| ", re.M)
_REPOSCAN_HIT = re.compile(r"^\[\d+\] (\S+)$", re.M)
_ROW_HIT = re.compile(r"^(r\d{4}),", re.M)
_VERDICT = re.compile(r"^\s+(accepted|rejected|duplicate)\s+(\S+)$", re.M)
_ITEM_LINE = re.compile(r"^([PCFTHV]\d+) \| ")  # a planning item as render.line printed it
_ADDED = re.compile(r"^(?:cart: added \d+ x (\S+);|plan: added (\S+) on day (\d+)[ .])")
_REMOVED = re.compile(r"^(?:cart: removed (\S+)\.$|plan: removed (\S+) from day (\d+)\.$)")
_COUPON = re.compile(r"^cart: coupon (\S+) (applied|removed)[;.]")
_SEARCH_HEAD = re.compile(r'^search ".*": top \d+ documents$')
_DOC_HIT = re.compile(r"^\[\d+\] (d[0-9a-f]{10}) \| (.+)$")
_DOC_HEAD = re.compile(r"^document (d[0-9a-f]{10}) \| (.+) \| page (\d+) of \d+$")


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
    def needed(self, tool: str, arguments: Any, history: list[Seen], objective: str = "") -> list[Needed] | None:
        """The needed units of a call (``objective``: the task text), or None when it is not a decision."""
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

    def needed(self, tool: str, arguments: Any, history: list[Seen], objective: str = "") -> list[Needed] | None:
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

    def needed(self, tool: str, arguments: Any, history: list[Seen], objective: str = "") -> list[Needed] | None:
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


class PlanRule:
    """Planning: the submit needs, per item of the deliverable, the line that showed the item's facts.

    The deliverable is rebuilt from the confirmations of the edits before the submit (``cart: added
    2 x P0171``, ``plan: removed H012 from day 1`` ...); refused edits confirm nothing.
    """

    def needed(self, tool: str, arguments: Any, history: list[Seen], objective: str = "") -> list[Needed] | None:
        if tool != "submit":
            return None
        shown: dict[str, set[str]] = {}
        for seen in history:
            for item, form in _item_lines(_QUOTE.sub("", seen.text)):
                shown.setdefault(item, set()).add(form)
        return [Needed(f"item:{item}", re.compile("|".join(f"^{re.escape(f)}$" for f in sorted(shown[item])), re.M))
                for item in _deliverable(history) if item in shown]


def _item_lines(text: str) -> list[tuple[str, str]]:
    """(id, form) of every world item a tool result printed: its line, with a hotel's free nights."""
    lines = text.split("\n")
    out = []
    for i, line in enumerate(lines):
        if m := _ITEM_LINE.match(line):
            nights = lines[i + 1] if i + 1 < len(lines) and lines[i + 1].startswith("  free nights: ") else None
            out.append((m.group(1), line if nights is None else f"{line}\n{nights}"))
    return out


def _deliverable(history: list[Seen]) -> list[str]:
    """The item ids in the cart or plan (and the applied coupons), in the order first added."""
    cart: dict[str, None] = {}
    lines: list[tuple[str, str]] = []  # (id, day) of the trip plan
    for seen in history:
        text = seen.text
        if m := _ADDED.match(text):
            if m.group(1):
                cart[m.group(1)] = None
            else:
                lines.append((m.group(2), m.group(3)))
        elif m := _REMOVED.match(text):
            if m.group(1):
                cart.pop(m.group(1), None)
            else:
                lines = [ln for ln in lines if ln != (m.group(2), m.group(3))]
        elif m := _COUPON.match(text):
            if m.group(2) == "applied":
                cart[m.group(1)] = None
            else:
                cart.pop(m.group(1), None)
    return list(dict.fromkeys([*cart, *(item for item, _ in lines)]))


class CorpusRule:
    """Corpus: the answer needs the title that showed the answered name and, per clue, a document
    page the reader's rule (``reader.supports``) finds showing the clue for that name."""

    def needed(self, tool: str, arguments: Any, history: list[Seen], objective: str = "") -> list[Needed] | None:
        if tool != "answer":
            return None
        text = arguments.get("text") if isinstance(arguments, dict) else None
        if not isinstance(text, str) or not normalise(text):
            return []
        hits, pages = _corpus_shown(history)
        titles = {**{d: t for d, t, _ in hits}, **{d: p.title for d, p in pages.items()}}
        name = next((n for t in titles.values() if (n := _entity_name(t)) and normalise(n) == normalise(text)),
                    text.strip())
        out = []
        heads = [rf"^\[\d+\] {re.escape(d)} \| {re.escape(t)}$" for d, t, _ in hits if _entity_name(t) == name]
        heads += [rf"^{re.escape(h)}$" for d, p in pages.items() if _entity_name(p.title) == name for h in p.heads]
        if heads:
            out.append(Needed(f"entity:{name}", re.compile("|".join(dict.fromkeys(heads)), re.M)))
        for cid, clue in _clues(objective):
            forms = dict.fromkeys(f for p in pages.values() if _shows(clue, p, name) for f in p.forms)
            if forms:
                out.append(Needed(f"{cid}", re.compile("|".join(f"^{re.escape(f)}$" for f in forms), re.M)))
        return out


@dataclass
class _Page:
    """An opened document: its title, its pages' text, each page's header and header + first line."""

    title: str
    text: dict[int, str]
    heads: list[str]
    forms: list[str]


def _corpus_shown(history: list[Seen]) -> tuple[list[tuple[str, str, str]], dict[str, _Page]]:
    """Search hits (id, title, snippet) and opened documents, as the tool results printed them."""
    hits: list[tuple[str, str, str]] = []
    pages: dict[str, _Page] = {}
    for seen in history:
        lines = _QUOTE.sub("", seen.text).split("\n")
        if m := _DOC_HEAD.match(lines[0]):
            page = pages.setdefault(m.group(1), _Page(m.group(2), {}, [], []))
            page.text[int(m.group(3))] = "\n".join(lines[1:])
            page.heads.append(lines[0])
            page.forms.append("\n".join(lines[:2]))
            continue
        if _SEARCH_HEAD.match(lines[0]):
            hits += [(m.group(1), m.group(2), lines[i + 1] if i + 1 < len(lines) else "")
                     for i, line in enumerate(lines) if (m := _DOC_HIT.match(line))]
    return hits, pages


def _entity_name(title: str) -> str | None:
    """The API object a docstring document is about, or the release a changelog item belongs to."""
    m = DOCSTRING_TITLE.match(base_title(title))
    return m.group(1) if m else release_of(title)


def _clues(objective: str) -> list[tuple[str, Clue]]:
    return [(m.group(1), clue) for line in objective.splitlines()
            if (m := CLUE_LINE.match(line)) and (clue := parse_clue(m.group(2)))]


def _shows(clue: Clue, page: _Page, name: str) -> bool:
    """Does the opened document show the clue for ``name``? A module clue is about the module the
    name is defined in: one of its dotted prefixes."""
    text = "\n".join(page.text[p] for p in sorted(page.text))
    parts = name.split(".")
    candidates = [".".join(parts[:i]) for i in range(1, len(parts))] if clue.kind == "module" else [name]
    return any(supports(clue, page.title, text, c) for c in candidates)


# The rules the families name in their declarations (``Declaration.evidence``, "module:attr").
REPOSCAN: EvidenceRule = ItemRule(_REPOSCAN_HIT, r"\[\d+\] {id}$")
ROWS: EvidenceRule = ItemRule(_ROW_HIT, r"^{id},")
UNITS: EvidenceRule = UnitRule()  # dataops, swe, sweissues
PLANNING: EvidenceRule = PlanRule()
CORPUS: EvidenceRule = CorpusRule()


def evidence_rule(family: str) -> EvidenceRule | None:
    """The rule the family declares (``Declaration.evidence``), or None when it declares none."""
    from pushbench.registry import Entry
    from pushbench.tasks import declaration

    target = declaration(family).evidence
    return None if target is None else Entry(target).load()
