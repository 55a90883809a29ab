"""SimLM on a structured issue: SWE-lite's mind, one symptom at a time.

``SweMind`` (and its ``UnitMind`` base) does the work: run the tests, locate a suspect, read it,
try the ranked repairs, revert a wrong one. Two things change for an issue with several hunks:
- it works from the *first* failure of the latest run it recalls (``issues.first_failure``), so
  the suspects and the repair ranking come from one symptom, as an engineer takes one traceback
  at a time;
- an edit whose following run still fails is kept when that run fails *fewer* tests than the
  run before the edit (a strict subset): that hunk is repaired, the next symptom is worked on.
  Recalling both runs is what tells it so; a forgotten earlier run makes it revert a good edit.
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


class SweIssuesMind(SweMind):
    objective_pattern = re.compile(r"Resolve (\d+) issue")

    def _read_evidence(self, reader: ContextReader, content: str, offset: int, step: int,  # type: ignore[override]
                       quoted: bool) -> None:
        before = len(reader.state.get("evidence", []))
        SweMind._read_evidence(reader, content, offset, step, quoted)
        evidence = reader.state.get("evidence", [])
        if len(evidence) > before:  # a test run was read: keep its first symptom's frames only
            evidence[-1] = first_failure(content)

    def _runs(self, unit: str, ctx: Recall) -> list[tuple[int, Any]]:
        """(step, evidence) of the recalled runs of ``unit`` it made itself (not quotations)."""
        key = self.reader.facts.keys.get(unit, -1)
        quoted = self.reader.state.get("quoted_runs", set())
        idx = np.flatnonzero(ctx.recalled & (ctx.kind == TESTOUT) & (ctx.key == key))
        return [(int(ctx.steps[i]), self.reader.state["evidence"][int(ctx.aux[i])]) for i in idx
                if int(ctx.aux[i]) not in quoted]

    def _unchecked_edit(self, unit: str, ctx: Recall) -> dict[str, Any] | None:
        last = super()._unchecked_edit(unit, ctx)
        if last is None or not last["failed"]:
            return last
        runs = self._runs(unit, ctx)
        before = [e for s, e in runs if s < last["step"]]
        after = [e for s, e in runs if s >= last["step"]]
        if before and after and set(after[-1].failing) < set(before[-1].failing):
            return None  # it repaired one symptom: keep the edit, work on what still fails
        return last

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
