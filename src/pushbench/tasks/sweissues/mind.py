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
from pushbench.policies.sim.units import NUDGE, Recall
from pushbench.guidance import quoted_blocks
from pushbench.tasks.swe.mind import FOUND, TESTOUT, SweMind
from pushbench.tasks.swe.reader import function_block
from pushbench.tasks.sweissues.issues import first_failure
from pushbench.tasks.sweissues.recollect import dated_quotes, hits, segments


_PROGRESS = re.compile(r"^([.FEsxX]+)\s*\[\s*\d+%\]$")


def failing_positions(output: str) -> frozenset[int] | None:
    """Which tests failed, by position in pytest's progress line (the head of every run, never cut
    from what is shown, unlike the summary at its tail); None if the output has no progress line."""
    marks = "".join(m.group(1) for line in output.splitlines() if (m := _PROGRESS.match(line.strip())))
    return frozenset(i for i, mark in enumerate(marks) if mark in "FE") if marks else None


_PAGE = re.compile(r"at most (\d+) lines per call")
_PAGED = "read page by page"  # read_file's description: pages are aligned (lines 1-P, P+1-2P, ...)
PROGRESS_SEEN = NUDGE  # the fact kind ``Recall.out_of_patience`` counts as progress when its aux is 1
OLDER = 10**6  # a retrieved item's step is placed this far before the turns in view


class SweIssuesMind(SweMind):
    objective_pattern = re.compile(r"Resolve (\d+) issue")

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Turn:
        """As SweMind; it reads a page of the size read_file's description offers."""
        read: dict[str, Any] = next((t.get("function", {}) for t in tools if t.get("function", {}).get("name") == "read_file"), {})
        if m := _PAGE.search(str(read.get("description") or "")):
            self.read_span = int(m.group(1))
        self.paged = _PAGED in str(read.get("description") or "")
        return super().act(messages, tools)

    def _read_start(self, lines: dict[int, str], line: int) -> int:
        """Where files are read page by page: the page that holds ``line``, or the page after what it read."""
        if not getattr(self, "paged", False):
            return super()._read_start(lines, line)
        if line not in lines:
            return (line - 1) // self.read_span * self.read_span + 1
        end = line
        while end + 1 in lines:
            end += 1
        return end + 1

    # --- reading memory output where it sits (recollect.py) ---------------------------------------
    def _parse(self, reader: ContextReader, message: dict[str, Any], offset: int, step: int) -> None:
        content = str(message.get("content") or "")
        if message.get("role") == "user":  # an ACG view dates its quotations
            now, reader.state["quote_dates"] = dated_quotes(content)
            if now is not None:
                reader.state["view_step"] = now
        super()._parse(reader, message, offset, step)
        reader.state["quote_dates"] = {}
        if message.get("role") == "system":  # core memory blocks: their quotations, where they sit
            for block in quoted_blocks(content):
                self.parse_quoted(reader, block, offset, step - reader.state.get("memory_turns", 0))

    def parse_extra(self, reader: ContextReader, content: str, offset: int, step: int) -> None:
        super().parse_extra(reader, content, offset, step)
        for segment, at in segments(content):  # raw tool output inside a memory's message
            reader.state["dating"] = None if at is None else ("item", at)
            self._read_evidence(reader, segment, offset, step, quoted=True)
        reader.state["dating"] = None

    def parse_quoted(self, reader: ContextReader, text: str, offset: int, step: int) -> None:
        at = reader.state.get("quote_dates", {}).get(text)
        reader.state["dating"] = None if at is None else ("view", at)
        super().parse_quoted(reader, text, offset, step)
        reader.state["dating"] = None
        searches = reader.state.setdefault("searches", [])
        for query, path, line, code in hits(text):  # a search's hits quoted without their header
            searches.append([(path, line, code)])
            reader.facts.add(FOUND, offset, step, query, len(searches) - 1)

    def _read_evidence(self, reader: ContextReader, content: str, offset: int, step: int,  # type: ignore[override]
                       quoted: bool) -> None:
        before = len(reader.state.get("evidence", []))
        SweMind._read_evidence(reader, content, offset, step, quoted)
        evidence = reader.state.get("evidence", [])
        if len(evidence) > before:  # a test run was read: keep its first symptom's frames only
            run = len(evidence) - 1
            evidence[run] = first_failure(content)
            failing = reader.state.setdefault("outcomes", {})[run] = failing_positions(content)
            if not quoted:
                self._note_fewer_failures(reader, content, failing, offset, step)
            if quoted and reader.state.get("dating"):  # a remembered run whose step the memory names
                reader.state["quoted_runs"].discard(run)
                reader.state.setdefault("dated", {})[run] = reader.state["dating"]

    @staticmethod
    def _note_fewer_failures(reader: ContextReader, content: str, failing: frozenset[int] | None, offset: int,
                             step: int) -> None:
        """A run of its own that fails fewer of an issue's tests than its run before: progress it sees
        (patience counts it, as a followed nudge is counted: ``PROGRESS_SEEN``), though nothing is accepted yet."""
        unit = content.split(" ", 2)[1].rstrip(":")
        last = reader.state.setdefault("last_failing", {})
        if failing is not None and last.get(unit) is not None and failing < last[unit]:
            reader.facts.add(PROGRESS_SEEN, offset, step, "", 1)
        last[unit] = failing

    def _runs(self, unit: str, ctx: Recall) -> list[tuple[int, frozenset[int] | None]]:
        """(step, failing positions) of the recalled runs of ``unit``, oldest first: its own, and those a
        memory shows with their step (an ACG view's step is placed against the turns in view; a
        retrieved item is older than all of them). Undated quotations are not among them."""
        key = self.reader.facts.keys.get(unit, -1)
        state = self.reader.state
        quoted, dated, outcomes = state.get("quoted_runs", set()), state.get("dated", {}), state.get("outcomes", {})
        found: dict[int, frozenset[int] | None] = {}
        for i in np.flatnonzero(ctx.recalled & (ctx.kind == TESTOUT) & (ctx.key == key)):
            run = int(ctx.aux[i])
            if run in quoted:
                continue
            where = dated.get(run)
            if where is None:
                at = int(ctx.steps[i])
            elif where[0] == "view":
                at = where[1] - state.get("view_step", where[1]) + ctx.step
            else:
                at = where[1] - OLDER
            if found.get(at) is None:  # an ACG region without the progress line says less
                found[at] = outcomes.get(run)
        return sorted(found.items())

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
        return self._back_out(kept[-1]) if kept else action

    def _back_out(self, kept: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        undo = {"path": kept["path"], "old": kept["new"], "new": kept["old"]}
        self.reader.state.setdefault("backouts", []).append((undo["path"], undo["old"], undo["new"]))
        return "edit", undo

    def _reconsider(self, unit: str, names: list[Any], ctx: Recall) -> tuple[str, dict[str, Any]] | None:
        """Its first tries at every suspect failed. One fault per function: if the failure still points
        at a function where it kept an edit, that edit only silenced a symptom; it backs it out (the
        first failure comes back, and it looks again) before trying the rest of the repairs."""
        kept = self._kept(unit)
        for name in (n for n in names if isinstance(n, str) and kept):
            for path, _line in self._located(name, ctx) or []:
                lines = self._lines(path, ctx)
                block = function_block(lines, name)
                if block is None:
                    continue
                body = {lines[n] for n in range(block[0], block[1] + 1) if n in lines}
                for edit in reversed(kept):
                    if edit["path"] == path and {edit["new"].split("\n")[-1], edit["old"].split("\n")[-1]} & body:
                        return self._back_out(edit)
        return None

    def _own_edits(self, unit: str) -> list[dict[str, Any]]:
        """The repairs it counts as tried: those since its last back-out (earlier ones were tried on a
        different file), every edit it backed out, and the undoing of an edit it keeps (that is a
        back-out, decided above, not a repair to try)."""
        edits = self.reader.state.get("edits", [])
        backouts = self.reader.state.get("backouts", [])
        marks = [i for i, e in enumerate(edits) if e["applied"] and not e.get("unit")
                 and (e["path"], e["old"], e["new"]) in backouts]
        since = marks[-1] + 1 if marks else 0
        undone = {(p, new, old) for p, old, new in backouts}
        tried = [e for i, e in enumerate(edits) if e.get("unit") == unit
                 and (i >= since or (e["path"], e["old"], e["new"]) in undone)]
        return tried + [{**e, "old": e["new"], "new": e["old"]} for e in self._kept(unit)]

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
