"""SimLM on DataOps-lite: the pages it inspected are its only evidence.

It parses each ``inspect`` page (CSV rows, file lines) into a view fact; for a unit it applies the
family reader (``tasks/dataops/units.py``: ``next_view``/``derive``) to the *recalled* views of
that unit only. A forgotten page is inspected again. After its own edit of a file the earlier views
of that file are stale (it re-reads before editing again) — if it recalls that edit: with the edit
forgotten it acts on the page it read before (stale inspection), and the edit's ``old`` text is no
longer there, so the edit fails and the recalled failure sends it back to the file. Each attempt at a unit is wrong with
probability ``false_positive + false_negative`` (misread column, off-by-one count, mistyped value),
fixed per (unit, attempt); the checker or the verifier then shows FAIL/rejected and it tries again.

A page quoted in a memory's message (a decision view, a search result) or shown again as a store's
retrieved item is read like a page, where that message sits; a quoted region of a page (header and some lines) shows only those lines, and
regions of one page recalled together are joined. A page counts as whole only when every line
its header announces is recalled; a count over a CSV and a missing-field repair need whole pages,
a lookup does not, and an unseen line is inspected again. A quotation is undated: after its own
edit of a file, quoted pages of that file are stale.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from pushbench.policies.base import Turn
from pushbench.policies.sim.attention import stable_uniform
from pushbench.policies.sim.memory import ContextReader
from pushbench.policies.sim.units import CHANGED, EDIT_FAILED, VIEW, Recall, UnitMind
from pushbench.tasks.dataops import units as du

_ROWS_PER_PAGE = re.compile(r"(\d+) rows per page")
_SPAN = re.compile(r": (?:rows|lines) (\d+)-(\d+) of \d+ \(page \d+ of \d+\)$")  # a page header's numbered span
_NUMBER = re.compile(r"^(?:row (\d+): |\s*(\d+)\|(?: |$))")  # a CSV row or a numbered file line
QUOTED_VIEW = 30  # a page (or region) read from a quotation: not its own action (the focus ignores it)


@dataclass(frozen=True)
class Shown:
    """One page as one message shows it: the parsed view and how many numbered lines the page has."""
    view: du.View
    expected: int
    quoted: bool


def _number(line: str) -> int | None:
    m = _NUMBER.match(line)
    return int(m.group(1) or m.group(2)) if m else None


def _join(shown: list[Shown]) -> tuple[du.View, bool]:
    """The lines of one page from every message recalled showing it (in line order; the latest
    showing of a line wins), and whether they are the whole page."""
    head: dict[str, None] = {}
    numbered: dict[int, str] = {}
    for item in shown:
        for line in item.view.lines:
            n = _number(line)
            if n is None:
                head.setdefault(line)
            else:
                numbered[n] = line
    first = shown[0].view
    lines = (*head, *(numbered[n] for n in sorted(numbered)))
    whole = len(numbered) >= max(item.expected for item in shown)
    return du.View(first.unit, first.path, first.page, first.pages, first.total, lines), whole


def _whole_paths(q: du.Question) -> set[str]:
    """Files this question reads for what they do not show (a count, an absent field)."""
    if q.form == "class":
        return {q["csv"]}
    if q.form == "missing":
        return {q["file"]}
    return set()


def perturb(value: str, draw: float) -> str:
    """A plausible wrong version of a value: a changed last digit, or a changed last character."""
    for i in range(len(value) - 1, -1, -1):
        if value[i].isdigit():
            digit = (int(value[i]) + 1 + int(draw * 8)) % 10
            return value[:i] + str(digit) + value[i + 1:]
    return value + "s" if value else "?"


class DataOpsMind(UnitMind):
    parse_replayable = True  # policies/sim/memory.py's contract: its pages are fact payloads
    checker_tool = "run_checker"
    objective_pattern = re.compile(r"backlog of (\d+) data-operations units")

    def __init__(self, profile: Any, seed: int):
        super().__init__(profile, seed)
        self.page_rows = 20

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Turn:
        for spec in tools:
            fn = spec.get("function", {})
            if fn.get("name") == "inspect" and (m := _ROWS_PER_PAGE.search(fn.get("description", ""))):
                self.page_rows = int(m.group(1))
        return super().act(messages, tools)

    def parse_extra(self, reader: ContextReader, content: str, offset: int, step: int) -> None:
        self._read_page(reader, content, offset, step, quoted=False)

    def parse_quoted(self, reader: ContextReader, text: str, offset: int, step: int) -> None:
        super().parse_quoted(reader, text, offset, step)
        self._read_page(reader, text, offset, step, quoted=True)

    def parse_retrieved(self, reader: ContextReader, text: str, offset: int, step: int) -> None:
        self._read_page(reader, text, offset, step, quoted=True)

    @staticmethod
    def _read_page(reader: ContextReader, text: str, offset: int, step: int, quoted: bool) -> None:
        view = du.parse_view(text)
        span = _SPAN.search(text.split("\n", 1)[0])
        if view is None or span is None:
            return
        shown = Shown(view, int(span.group(2)) - int(span.group(1)) + 1, quoted)
        reader.facts.add(QUOTED_VIEW if quoted else VIEW, offset, step, f"{view.unit}|{view.path}|{view.page}",
                         payload=shown)

    def _views(self, unit: str, ctx: Recall, q: du.Question) -> tuple[du.Views, set[tuple[str, int]]]:
        """Recalled pages of this unit (pages of a file it has edited since are stale), and the
        pages of which only some lines are recalled."""
        facts = self.reader.facts
        unit_key = facts.keys.get(unit, -1)
        # stale inspection: only a recalled edit (or failed edit) of its own marks the pages before it stale;
        # a forgotten one leaves it acting on a page read before the file changed
        changes = np.flatnonzero(ctx.recalled & ((ctx.kind == CHANGED) | (ctx.kind == EDIT_FAILED))
                                 & (ctx.key == unit_key))
        stale_before = int(changes[-1]) if len(changes) and q.kind == du.METADATA else -1
        pages: dict[tuple[str, int], list[Shown]] = {}
        for i in np.flatnonzero(ctx.recalled & ((ctx.kind == VIEW) | (ctx.kind == QUOTED_VIEW))):
            if not ctx.names[int(ctx.key[i])].startswith(unit + "|"):
                continue
            shown: Shown = facts.payload(int(i))
            stale = i < stale_before or (shown.quoted and stale_before >= 0)
            if q.form in ("wrong", "missing") and shown.view.path == q["file"] and stale:
                continue
            pages.setdefault((shown.view.path, shown.view.page), []).append(shown)
        views: du.Views = {}
        partial: set[tuple[str, int]] = set()
        for key, items in pages.items():
            views[key], whole = _join(items)
            if not whole:
                partial.add(key)
        return views, partial

    def work(self, unit: str, title: str, ctx: Recall, attempt: int) -> tuple[str, dict[str, Any]] | None:
        q = du.parse_title(title) if title else None
        if q is None:
            return "inspect", {"unit": unit}
        views, partial = self._views(unit, ctx, q)
        whole = _whole_paths(q)
        action = du.derive(q, {k: v for k, v in views.items() if k not in partial or k[0] not in whole})
        if action is None:  # look for what is not shown: a page of which lines are missing is read again
            pages = {path: v.pages for (path, _), v in views.items()}
            complete = {k: v for k, v in views.items() if k not in partial}
            want = du.next_view(q, complete, pages, self.page_rows)
            if want is None:
                return "inspect", {"unit": unit}
            return "inspect", {"unit": unit, "path": want[0], "page": want[1]}
        draw = stable_uniform(self.seed, "wrong", unit, attempt)
        wrong = draw < self.profile.false_positive + self.profile.false_negative
        if action[0] == "answer":
            value = perturb(action[1], draw) if wrong else action[1]
            return "answer", {"unit": unit, "value": value}
        _, path, old, new = action
        if wrong:  # a mistyped value on the field's line (the last line of the new text)
            head, sep, line = new.rpartition("\n")
            new = head + sep + perturb(line, draw)
        return "edit", {"unit": unit, "path": path, "old": old, "new": new}
