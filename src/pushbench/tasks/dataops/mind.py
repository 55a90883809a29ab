"""SimLM on DataOps-lite: the pages it inspected are its only evidence.

It parses each ``inspect`` page (CSV rows, file lines) into a view fact; for a unit it applies the
family reader (``tasks/dataops/units.py``: ``next_view``/``derive``) to the *recalled* views of
that unit only. A forgotten page is inspected again. After its own edit of a file the earlier views
of that file are stale (it re-reads before editing again). Each attempt at a unit is wrong with
probability ``false_positive + false_negative`` (misread column, off-by-one count, mistyped value),
fixed per (unit, attempt); the checker or the verifier then shows FAIL/rejected and it tries again.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from pushbench.policies.base import Turn
from pushbench.policies.sim.attention import stable_uniform
from pushbench.policies.sim.memory import ContextReader
from pushbench.policies.sim.units import CHANGED, EDIT_FAILED, VIEW, Recall, UnitMind
from pushbench.tasks.dataops import units as du

_ROWS_PER_PAGE = re.compile(r"(\d+) rows per page")


def perturb(value: str, draw: float) -> str:
    """A plausible wrong version of a value: a changed last digit, or a changed last character."""
    for i in range(len(value) - 1, -1, -1):
        if value[i].isdigit():
            digit = (int(value[i]) + 1 + int(draw * 8)) % 10
            return value[:i] + str(digit) + value[i + 1:]
    return value + "s" if value else "?"


class DataOpsMind(UnitMind):
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
        view = du.parse_view(content)
        if view is not None:
            key = f"{view.unit}|{view.path}|{view.page}"
            reader.state.setdefault("views", {})[key] = view
            reader.facts.add(VIEW, offset, step, key)

    def _views(self, unit: str, ctx: Recall, q: du.Question) -> du.Views:
        """Recalled pages of this unit; pages of a file it has edited since are stale."""
        facts, stored = self.reader.facts, self.reader.state.get("views", {})
        unit_key = facts.keys.get(unit, -1)
        changes = np.flatnonzero(((ctx.kind == CHANGED) | (ctx.kind == EDIT_FAILED)) & (ctx.key == unit_key))
        stale_before = int(changes[-1]) if len(changes) and q.kind == du.METADATA else -1
        views: du.Views = {}
        for i in np.flatnonzero(ctx.recalled & (ctx.kind == VIEW)):
            name = ctx.names[int(ctx.key[i])]
            if not name.startswith(unit + "|"):
                continue
            view = stored[name]
            if q.form in ("wrong", "missing") and view.path == q["file"] and i < stale_before:
                continue
            views[(view.path, view.page)] = view
        return views

    def work(self, unit: str, title: str, ctx: Recall, attempt: int) -> tuple[str, dict[str, Any]] | None:
        q = du.parse_title(title) if title else None
        if q is None:
            return "inspect", {"unit": unit}
        views = self._views(unit, ctx, q)
        action = du.derive(q, views)
        if action is None:
            pages = {path: v.pages for (path, _), v in views.items()}
            want = du.next_view(q, views, pages, self.page_rows)
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
