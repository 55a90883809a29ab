"""Budget-aware rendering of a decision view (seed §3.5, App. B.1).

The view is built from whole blocks: the header, one per requirement (its line), one per evidence
slot (a unit under a requirement: its provenance line and its text), one per association. A block
is admitted only if the view stays within the budget; a block that does not fit is skipped and
smaller later ones may still fit. Priority: the header, then every requirement's current-event
evidence, then historical evidence round-robin over the requirements by rank, then associations.
A unit under several requirements is expanded once (at its first place in the view) and every
other place holds a one-line reference. When the whole view would not fit (a tight budget),
associations are shortened to their provenance and first line. What is left out stays in the
store for later decisions. The token count of the finished message is checked exactly (o200k) and
the lowest-priority block dropped while it is over.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

from pushbench import guidance
from pushbench.memory.acg.units import Unit, UnitStore
from pushbench.memory.acg.views import DecisionView
from pushbench.tokens import count_message_tokens, count_tokens

ALSO_STEPS = 4  # other occurrences named in a provenance line
SOURCE_CHARS = 160  # of a call's arguments in a provenance line
NEAR = 24  # tokens: an estimate this close to the budget is checked by counting the message
_COSTS: dict[str, int] = {}  # line -> its tokens with the newline: pure, so every renderer of a process shares it


@dataclass
class Rendered:
    text: str | None  # the view message's content (None: nothing fits or nothing to show)
    tokens: int  # of the view message, an upper bound tight to one token (0 without a message)
    expanded: list[int] = field(default_factory=list)  # units shown in full, view order
    referenced: list[int] = field(default_factory=list)  # units shown as a reference line
    shortened: list[int] = field(default_factory=list)  # associations cut to their first line
    omitted: list[int] = field(default_factory=list)  # selected units that did not fit


@dataclass
class _Slot:
    section: int  # index of the requirement (len(requirements): associations)
    order: int  # position within the section
    unit: int
    current: bool
    short: bool = False


def source(unit: Unit, current_event: int) -> str:
    o = next((o for o in unit.occurrences if o.event == current_event), unit.first)
    if not o.tool:
        return "message"
    args = o.arguments if len(o.arguments) <= SOURCE_CHARS else o.arguments[:SOURCE_CHARS] + "…"
    return f"{o.tool} {args}"


def evidence_lines(unit: Unit, current_event: int, short: bool = False) -> list[str]:
    """Provenance (the producing step, or the current event, and the other steps that showed it), then the text."""
    current = unit.occurs_in(current_event)
    steps = [o.step for o in unit.occurrences if o.event != current_event]
    step = None if current else steps.pop(0)
    head = guidance.acg_evidence(unit.id, step, steps[-ALSO_STEPS:], source(unit, current_event))
    body = [guidance.quoted(line) for line in unit.text.splitlines()]  # a quotation of an earlier message
    return [head, *(body[:1] if short else body)]


class Renderer:
    """Costs are counted per line and cached. Every line of a view starts with a non-space character
    (``[``, ``(`` or ``|``), and o200k's pre-tokenizer never joins a newline with a following
    non-space character, so a view's tokens are the sum of its lines' (each with its newline), less
    one when the last newline was a token of its own: the sum is a bound, tight to one token, and
    the finished message is counted exactly when the bound comes near the budget."""

    def __init__(self) -> None:
        self._cost = _COSTS  # episodes of one task show the same lines again
        self._lines: dict[tuple[int, int, int, bool], list[str]] = {}

    def lines(self, unit: Unit, current_event: int, short: bool = False) -> list[str]:
        """``evidence_lines``, cached while the unit's occurrences and currency stay the same."""
        current = unit.last.event == current_event
        key = (unit.id, len(unit.occurrences), current_event if current else -1, short)
        out = self._lines.get(key)
        if out is None:
            if len(self._lines) > 20_000:
                self._lines.clear()
            out = self._lines[key] = evidence_lines(unit, current_event, short)
        return out

    def cost(self, lines: list[str]) -> int:
        total = 0
        cache = self._cost
        for line in lines:
            c = cache.get(line)
            if c is None:
                if len(cache) > 50_000:
                    cache.clear()
                c = cache[line] = count_tokens(line + "\n")
            total += c
        return total

    def render(self, view: DecisionView, store: UnitStore, current_event: int, budget: int) -> Rendered:
        if budget <= 0:
            return Rendered(None, 0)
        slots = self._slots(view)
        if not slots:
            return Rendered(None, 0)
        header = guidance.acg_view(view.step, 0, len(store))
        reqs = [guidance.acg_requirement(r.requirement.id, r.requirement.kind, r.requirement.text)
                for r in view.requirements]
        lines_of = {u: self.lines(store.units[u], current_event) for u in dict.fromkeys(s.unit for s in slots)}
        assoc = len(reqs)
        sections = {s.section for s in slots}
        full = 6 + self.cost([header]) + sum(self.cost(lines) for lines in lines_of.values())
        full += sum(self.cost([reqs[k]] if k < assoc else [guidance.ACG_UNASSIGNED]) for k in sections)
        if full > budget:  # tight: associations shrink to their provenance and first line
            for s in slots:
                s.short = s.section == assoc
        used = 6 + self.cost([header])  # message overhead and reply priming, as count_message_tokens counts
        admitted: list[_Slot] = []
        expanded: set[int] = set()
        opened: set[int] = set()
        for s in self._priority(slots, assoc):
            lines = self._slot_lines(s, store, current_event, lines_of, expanded)
            extra = self.cost(lines) + (self.cost([reqs[s.section]]) if s.section < len(reqs)
                                        and s.section not in opened else 0)
            if s.section == len(reqs) and s.section not in opened:
                extra += self.cost([guidance.ACG_UNASSIGNED])
            if used + extra > budget:
                continue
            used += extra
            admitted.append(s)
            opened.add(s.section)
            if not s.short:
                expanded.add(s.unit)
        return self._assemble(view, store, current_event, admitted, slots, reqs, budget)

    @staticmethod
    def _slots(view: DecisionView) -> list[_Slot]:
        slots = []
        for k, rv in enumerate(view.requirements):
            slots += [_Slot(k, n, u, True) for n, u in enumerate(rv.current)]
            slots += [_Slot(k, len(rv.current) + n, u, False) for n, u in enumerate(rv.history)]
        slots += [_Slot(len(view.requirements), n, u, False) for n, u in enumerate(view.unassigned)]
        return slots

    @staticmethod
    def _priority(slots: list[_Slot], assoc: int) -> list[_Slot]:
        """Current-event evidence, then history round-robin by rank, then associations."""
        current = [s for s in slots if s.current]
        history = sorted((s for s in slots if not s.current and s.section < assoc), key=lambda s: (s.order, s.section))
        return current + history + [s for s in slots if s.section == assoc]

    def _slot_lines(self, s: _Slot, store: UnitStore, current_event: int, lines_of: dict[int, list[str]],
               expanded: set[int]) -> list[str]:
        if s.short:
            return self.lines(store.units[s.unit], current_event, short=True)
        if s.unit in expanded:
            return [guidance.acg_reference(s.unit)]
        return lines_of[s.unit]

    def _assemble(self, view: DecisionView, store: UnitStore, current_event: int, admitted: list[_Slot],
                  slots: list[_Slot], reqs: list[str], budget: int) -> Rendered:
        while admitted:
            out = self._layout(view, store, current_event, admitted, reqs)
            tokens = 6 + self.cost(cast(str, out.text).split("\n"))  # _layout always sets the text; overhead and priming + the lines (see the class notes)
            if tokens > budget - NEAR:
                tokens = count_message_tokens([{"role": "user", "content": out.text}])
            if tokens <= budget:
                out.tokens = tokens
                chosen = {s.unit for s in admitted}
                out.omitted = list(dict.fromkeys(s.unit for s in slots if s.unit not in chosen))
                return out
            admitted = admitted[:-1]  # the lowest-priority block goes
        return Rendered(None, 0, omitted=list(dict.fromkeys(s.unit for s in slots)))

    def _layout(self, view: DecisionView, store: UnitStore, current_event: int, admitted: list[_Slot],
                reqs: list[str]) -> Rendered:
        out = Rendered(None, 0)
        body: list[str] = []
        seen: set[int] = set()
        for section in sorted({s.section for s in admitted}):
            body.append(reqs[section] if section < len(reqs) else guidance.ACG_UNASSIGNED)
            for s in sorted((s for s in admitted if s.section == section), key=lambda s: s.order):
                unit = store.units[s.unit]
                if s.short:
                    body += self.lines(unit, current_event, short=True)
                    out.shortened.append(s.unit)
                elif s.unit in seen:
                    body.append(guidance.acg_reference(s.unit))
                    out.referenced.append(s.unit)
                else:
                    body += self.lines(unit, current_event)
                    seen.add(s.unit)
                    out.expanded.append(s.unit)
        shown = len(seen | set(out.shortened))
        out.text = "\n".join([guidance.acg_view(view.step, shown, len(store)), *body])
        return out

