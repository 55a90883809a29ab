"""SimLM on a structured issue: SWE-lite's mind, one symptom at a time.

``SweMind`` (and its ``UnitMind`` base) does the work: run the tests, locate a suspect, read it,
try the ranked repairs, revert a wrong one. Two things change for an issue with several hunks:
- it works from the *first* failure of the latest run it recalls (``issues.first_failure``), so
  the suspects and the repair ranking come from one symptom, as an engineer takes one traceback
  at a time;
- an edit whose following run still fails is kept when that run fails *fewer* tests than the
  run before the edit (a strict subset, read from pytest's progress line: ``F`` marks by
  position, at the head of every output shown): that hunk is repaired, the next symptom is worked on.
  Recalling both runs is what tells it so; a forgotten earlier run makes it revert a good edit.
Out of ideas with an edit kept, it backs out the latest kept edit (a wrong edit can silence one
symptom) and runs the tests again, rather than giving up.
There is no ``status`` tool: where ``UnitMind`` would check the status, it calls ``final``.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from pushbench.policies.base import Turn
from pushbench.policies.sim.memory import ContextReader
from pushbench.policies.sim.units import Recall
from pushbench.tasks.swe.mind import TESTOUT, SweMind
from pushbench.tasks.sweissues.issues import first_failure


_PROGRESS = re.compile(r"^([.FEsxX]+)\s*\[\s*\d+%\]$")


def failing_positions(output: str) -> frozenset[int] | None:
    """Which tests failed, by position in pytest's progress line (the head of every run, never cut
    from what is shown, unlike the summary at its tail); None if the output has no progress line."""
    marks = "".join(m.group(1) for line in output.splitlines() if (m := _PROGRESS.match(line.strip())))
    return frozenset(i for i, mark in enumerate(marks) if mark in "FE") if marks else None


class SweIssuesMind(SweMind):
    objective_pattern = re.compile(r"Resolve (\d+) issue")

    def _read_evidence(self, reader: ContextReader, content: str, offset: int, step: int,  # type: ignore[override]
                       quoted: bool) -> None:
        before = len(reader.state.get("evidence", []))
        SweMind._read_evidence(reader, content, offset, step, quoted)
        evidence = reader.state.get("evidence", [])
        if len(evidence) > before:  # a test run was read: keep its first symptom's frames only
            evidence[-1] = first_failure(content)
            reader.state.setdefault("outcomes", {})[len(evidence) - 1] = failing_positions(content)

    def _runs(self, unit: str, ctx: Recall) -> list[tuple[int, frozenset[int] | None]]:
        """(step, failing positions) of the recalled runs of ``unit`` it made itself (not quotations)."""
        key = self.reader.facts.keys.get(unit, -1)
        quoted = self.reader.state.get("quoted_runs", set())
        idx = np.flatnonzero(ctx.recalled & (ctx.kind == TESTOUT) & (ctx.key == key))
        outcomes = self.reader.state.get("outcomes", {})
        return [(int(ctx.steps[i]), outcomes.get(int(ctx.aux[i]))) for i in idx if int(ctx.aux[i]) not in quoted]

    def _unchecked_edit(self, unit: str, ctx: Recall) -> dict[str, Any] | None:
        last = super()._unchecked_edit(unit, ctx)
        if last is None or not last["failed"]:
            return last
        runs = self._runs(unit, ctx)
        before = [e for s, e in runs if s < last["step"]]
        after = [e for s, e in runs if s >= last["step"]]
        if before and after and before[-1] is not None and after[-1] is not None and after[-1] < before[-1]:
            return None  # it repaired one symptom: keep the edit, work on what still fails
        return last

    def _work(self, unit: str, ctx: Recall, attempt: int) -> tuple[str, dict[str, Any]]:
        """SWE-lite's step; but out of ideas with a kept edit in place, it backs that edit out (a
        partial fix can be a wrong edit that silenced one symptom) and looks at the failure again."""
        edits = self.reader.state.get("edits", [])
        backouts = self.reader.state.setdefault("backouts", [])
        if edits and edits[-1]["applied"] and not edits[-1].get("unit") and \
                (edits[-1]["path"], edits[-1]["old"], edits[-1]["new"]) in backouts and \
                not any(s >= edits[-1]["step"] for s, _ in self._runs(unit, ctx)):
            return "run_tests", {"unit": unit}
        action = super()._work(unit, ctx, attempt)
        if action[0] != "submit":
            return action
        kept = self._kept(unit)
        if not kept:
            return action
        undo = {"path": kept[-1]["path"], "old": kept[-1]["new"], "new": kept[-1]["old"]}
        backouts.append((undo["path"], undo["old"], undo["new"]))
        return "edit", undo

    def _own_edits(self, unit: str) -> list[dict[str, Any]]:
        """The repairs it counts as tried: those since its last back-out (earlier ones were tried on
        a different file) and every edit it backed out."""
        edits = self.reader.state.get("edits", [])
        backouts = self.reader.state.get("backouts", [])
        marks = [i for i, e in enumerate(edits) if e["applied"] and not e.get("unit")
                 and (e["path"], e["old"], e["new"]) in backouts]
        since = marks[-1] + 1 if marks else 0
        undone = {(p, new, old) for p, old, new in backouts}
        return [e for i, e in enumerate(edits) if e.get("unit") == unit
                and (i >= since or (e["path"], e["old"], e["new"]) in undone)]

    def _kept(self, unit: str) -> list[dict[str, Any]]:
        """Its applied edits of ``unit`` that no later applied edit has undone, oldest first."""
        edits = self.reader.state.get("edits", [])
        out = []
        for i, edit in enumerate(edits):
            if edit.get("unit") != unit or not edit["applied"]:
                continue
            if not any(e["applied"] and e.get("path") == edit["path"] and e.get("old") == edit["new"]
                       and e.get("new") == edit["old"] for e in edits[i + 1:]):
                out.append(edit)
        return out

    def _call(self, name: str, args: dict[str, Any], call_id: str) -> Turn:
        if name == "status":  # no status tool: claim what it believes instead
            recall = Recall(self, self._mask(), self.reader.assistant_turns)
            name, args = "final", {"count": recall.believed_count()}
        return super()._call(name, args, call_id)

    def _mask(self) -> np.ndarray:
        from pushbench.policies.sim.attention import recalled_mask

        facts = self.reader.facts
        return recalled_mask(self.profile, facts.array("offset"), self.reader.total_tokens, self.seed,
                             self.reader.assistant_turns)


__all__ = ["SweIssuesMind"]
