"""SimLM on SWE-lite: the failing test output it saw and the code it read are its only evidence.

Per unit (``UnitMind`` handles the backlog, checker/submit stages, forgetting and stopping):
1. run the unit's tests, to see the failure (a forgotten failure is run again);
2. from the recalled failure, the suspects (``reader.suspects``: library frames, then the
   names the failing test line calls); ``search_files("def <name>(")`` for the first suspect whose
   definition it has not located (a forgotten search is repeated);
3. ``read_file`` around the definition until the whole function is in view;
4. the repairs a reader of that code can propose, ranked by the failure (``rank_repairs``); it
   edits the next untried one (at most three per function before it suspects the next function) — with probability ``false_positive + false_negative`` per try
   (fixed per unit and try) it picks a different candidate instead (a wrong edit);
5. after a failing check it reverts its last edit (an ``edit`` without a unit) and tries the next —
   if it recalls that edit: a forgotten edit is neither checked nor reverted, and it works from code
   it read before the edit (stale inspection); an edit that then fails to apply marks the reads of
   that file before it stale, so it reads the file again;
6. when the traceback's names are used up, it reads the failing test's body and tries the
   functions it calls (nearest to the failing line first); then the remaining repairs of every
   suspect; with nothing left it submits the unit once and moves on to another open unit.
The edit replaces the changed line together with the line before it, exactly as read.
It never reads files: only the messages. Test output, search results and file regions quoted in a
memory's message (a decision view, a search result) or shown again as a store's retrieved item are
read like the originals, where that message sits, and show only the lines quoted (a search header without its hits locates nothing).
A quotation is undated: a quoted failing run is evidence of the failure, not a verdict on its
latest edit, and a quoted run that shows no failure is not read.
"""

from __future__ import annotations

import json
import re
from typing import Any, cast

import numpy as np

from pushbench.policies.sim.attention import stable_uniform
from pushbench.policies.sim.memory import ContextReader
from pushbench.policies.sim.units import CHANGED, EDIT_FAILED, Recall, UnitMind
from pushbench.tasks.swe.reader import (Evidence, parse_read, rank_repairs, read_failure, suspects, test_suspects,
                                        visible_repairs)

TESTOUT, FOUND, READ = 20, 21, 22  # fact kinds beyond the shared ones
_CHECK_HEAD = re.compile(r"^(?:checker|submit) (\S+): (?:FAIL|rejected)")
_SEARCH_HEAD = re.compile(r'^search_files "(.*)": (\d+) matching')
_HIT = re.compile(r"^([\w./-]+\.py):(\d+): (.*)$")
_READ_HEAD = re.compile(r"^([\w./-]+) lines (\d+)-(\d+) of (\d+)$")
READ_SPAN = 120
TRIES_PER_FUNCTION = 3  # repairs tried in one function before suspecting the next one
MAX_DEFINITIONS = 3  # a name defined more often is only looked up where the traceback points


class SweMind(UnitMind):
    parse_replayable = True  # policies/sim/memory.py's contract
    checker_tool = "run_tests"
    read_span = READ_SPAN  # lines it asks read_file for at once (a page)
    objective_pattern = re.compile(r"Repair (\d+) issues")

    # --- reading -------------------------------------------------------------------------------
    def _parse_call(self, facts: Any, fn: dict[str, Any], offset: int, step: int) -> None:
        super()._parse_call(facts, fn, offset, step)
        try:
            args = json.loads(fn.get("arguments") or "{}")
        except json.JSONDecodeError:
            args = {}
        self.reader.state["last_call"] = (fn.get("name"), args if isinstance(args, dict) else {})

    def parse_extra(self, reader: ContextReader, content: str, offset: int, step: int) -> None:
        state, facts = reader.state, reader.facts
        first = content.split("\n", 1)[0]
        name, args = cast("tuple[str, dict[str, Any]]", state.get("last_call") or ("", {}))
        if name == "edit":
            applied = first.startswith("edit: ")
            state.setdefault("edits", []).append({**args, "applied": applied, "step": step})
            if not applied and args.get("unit"):
                facts.add(EDIT_FAILED, offset, step, str(args["unit"]))
        self._read_evidence(reader, content, offset, step, quoted=False)

    def parse_quoted(self, reader: ContextReader, text: str, offset: int, step: int) -> None:
        super().parse_quoted(reader, text, offset, step)
        self._read_evidence(reader, text, offset, step, quoted=True)

    def parse_retrieved(self, reader: ContextReader, text: str, offset: int, step: int) -> None:
        self._read_evidence(reader, text, offset, step, quoted=True)

    @staticmethod
    def _read_evidence(reader: ContextReader, content: str, offset: int, step: int, quoted: bool) -> None:
        """A test run, a search result or a file region; from a quotation, only what it shows."""
        state, facts = reader.state, reader.facts
        first = content.split("\n", 1)[0]
        if m := _CHECK_HEAD.match(first):
            evidence = read_failure(content)
            if quoted and not (evidence.failing or evidence.errors or evidence.frames):
                return
            state.setdefault("evidence", []).append(evidence)
            if quoted:
                state.setdefault("quoted_runs", set()).add(len(state["evidence"]) - 1)
            facts.add(TESTOUT, offset, step, m.group(1), len(state["evidence"]) - 1)
        elif m := _SEARCH_HEAD.match(first):
            hits = [(h.group(1), int(h.group(2)), h.group(3)) for line in content.splitlines()[1:]
                    if (h := _HIT.match(line))]
            if quoted and not hits and int(m.group(2)):
                return
            searches = state.setdefault("searches", [])
            searches.append(hits)
            facts.add(FOUND, offset, step, m.group(1), len(searches) - 1)
        elif m := _READ_HEAD.match(first):
            reads = state.setdefault("reads", [])
            reads.append((m.group(1), parse_read(content)))
            facts.add(READ, offset, step, m.group(1), len(reads) - 1)

    # --- what it recalls ------------------------------------------------------------------------
    def _evidence(self, unit: str, ctx: Recall) -> tuple[bool, Evidence | None]:
        """(any failing run recalled, the latest recalled one that shows a failure to work from)."""
        key = self.reader.facts.keys.get(unit, -1)
        idx = np.flatnonzero(ctx.recalled & (ctx.kind == TESTOUT) & (ctx.key == key))
        for i in idx[::-1]:
            evidence = self.reader.state["evidence"][int(ctx.aux[i])]
            if evidence.failing or evidence.errors or evidence.frames:
                return True, evidence
        return bool(len(idx)), None

    def _located(self, name: str, ctx: Recall) -> list[tuple[str, int]] | None:
        query = f"def {name}("
        key = self.reader.facts.keys.get(query, -1)
        found = np.flatnonzero(ctx.recalled & (ctx.kind == FOUND) & (ctx.key == key))
        if not len(found):
            return None
        hits = [hit for i in found for hit in self.reader.state["searches"][int(ctx.aux[i])]]
        return list(dict.fromkeys((path, line) for path, line, _ in hits if not _is_test(path)))

    def _lines(self, path: str, ctx: Recall) -> dict[int, str]:
        """The lines of ``path`` it recalls reading; reads before a recalled failed edit of that path
        are stale (the failure shows the file is not what it read), so it reads the file again."""
        key = self.reader.facts.keys.get(path, -1)
        failed = [e["step"] for e in self.reader.state.get("edits", []) if not e["applied"] and e.get("path") == path
                  and e.get("unit") and self._recalls_edit(e, ctx, EDIT_FAILED)]
        since = max(failed, default=-1)
        lines: dict[int, str] = {}
        for i in np.flatnonzero(ctx.recalled & (ctx.kind == READ) & (ctx.key == key) & (ctx.steps > since)):
            lines.update(self.reader.state["reads"][int(ctx.aux[i])][1])
        return lines

    def _recalls_edit(self, edit: dict[str, Any], ctx: Recall, kind: int) -> bool:
        """Does it recall this edit of its own (its call, or for a failed one the failure)?"""
        key = self.reader.facts.keys.get(str(edit.get("unit")), -1)
        step = edit["step"] - 1 if kind == CHANGED else edit["step"]  # the call's step; its result's step
        return bool((ctx.recalled & (ctx.kind == kind) & (ctx.key == key) & (ctx.steps == step)).any())

    def _own_edits(self, unit: str) -> list[dict[str, Any]]:
        return [e for e in self.reader.state.get("edits", []) if e.get("unit") == unit]

    # --- deciding -------------------------------------------------------------------------------
    def work(self, unit: str, title: str, ctx: Recall, attempt: int) -> tuple[str, dict[str, Any]] | None:
        hopeless = self.reader.state.setdefault("hopeless", set())
        if unit in hopeless:  # out of ideas there: work on another open unit, or stop
            done = ctx.done_units()
            others = [u for u in ctx.listed_units() if u not in done and u not in hopeless]
            if others:
                return self.work(others[0], title, ctx, attempt)
            return "final", {"count": ctx.believed_count()}
        action = self._work(unit, ctx, attempt)
        if action[0] == "submit":  # no repair left to try: have it verified once, then move on
            hopeless.add(unit)
        return action

    def _work(self, unit: str, ctx: Recall, attempt: int) -> tuple[str, dict[str, Any]]:
        seen_failure, evidence = self._evidence(unit, ctx)
        if not seen_failure:
            return "run_tests", {"unit": unit}
        last = self._unchecked_edit(unit, ctx)
        if last is not None:  # its last edit is still in place: was it checked and found wrong?
            if not last["failed"]:
                return "run_tests", {"unit": unit}
            return "edit", {"path": last["path"], "old": last["new"], "new": last["old"]}
        if evidence is None:  # only runs that crashed before any test (e.g. an import error)
            return "submit", {"unit": unit}
        tried = {(e["path"], e["old"], e["new"]) for e in self._own_edits(unit)}
        names: list[Any] = suspects(evidence)  # names, then (kind, path, line) reads
        test_frame = next((f for f in evidence.frames if _is_test(f.path)), None)
        if test_frame is not None:  # after the traceback's names: what the test body calls
            seen = self._lines(test_frame.path, ctx)
            if test_frame.line not in seen:
                names.append(("read-test", test_frame.path, test_frame.line))
            else:
                names += [n for n in test_suspects(seen, test_frame.line) if n not in names]
        for cap in (TRIES_PER_FUNCTION, None):  # a few tries per suspect first, then the rest
            action = self._next_try(unit, names, evidence, ctx, tried, attempt, cap)
            if action is None and cap is not None:
                action = self._reconsider(unit, names, ctx)
            if action is not None:
                return action
        return "submit", {"unit": unit}  # out of ideas: have it verified anyway

    def _read_start(self, lines: dict[int, str], line: int) -> int:
        """Where it reads next to see the function at ``line`` (``_next_start``)."""
        return _next_start(lines, line)

    def _reconsider(self, unit: str, names: list[Any], ctx: Recall) -> tuple[str, dict[str, Any]] | None:
        """Between the first few tries per suspect and the rest: a subclass's second thought (None: none)."""
        return None

    def _next_try(self, unit: str, names: list[Any], evidence: Evidence, ctx: Recall, tried: set[tuple[str, str, str]],
                  attempt: int, cap: int | None) -> tuple[str, dict[str, Any]] | None:
        for name in names:
            if isinstance(name, tuple):  # the library names ran out: read the failing test itself
                _, path, line = name
                return "read_file", {"path": path, "start": max(1, line - 30), "end": line, "unit": unit}
            located = self._located(name, ctx)
            if located is None:
                return "search_files", {"query": f"def {name}("}
            framed = {f.path for f in evidence.frames if f.function == name}
            if len(located) > MAX_DEFINITIONS:  # a common name (``__init__``): only where the traceback points
                located = [hit for hit in located if hit[0] in framed]
            for path, line in sorted(located, key=lambda hit: hit[0] not in framed):  # the traceback's file first
                lines = self._lines(path, ctx)
                repairs = visible_repairs(lines, name)
                if repairs is None:
                    start = self._read_start(lines, line)
                    return "read_file", {"path": path, "start": start, "end": start + self.read_span - 1, "unit": unit}
                ranked = [self._edit_args(path, r, lines) for r in rank_repairs(repairs, evidence, path)]
                if cap is not None and sum(1 for a in ranked if (a["path"], a["old"], a["new"]) in tried) >= cap:
                    continue  # a few hypotheses per function, then the next suspect
                untried = [a for a in ranked if (a["path"], a["old"], a["new"]) not in tried]
                if untried:
                    return "edit", {**self._choose(untried, unit, attempt), "unit": unit}
        return None

    def _choose(self, untried: list[dict[str, Any]], unit: str, attempt: int) -> dict[str, Any]:
        draw = stable_uniform(self.seed, "wrong", unit, attempt)
        if len(untried) > 1 and draw < self.profile.false_positive + self.profile.false_negative:
            return untried[1 + int(stable_uniform(self.seed, "which", unit, attempt) * (len(untried) - 1))]
        return untried[0]

    @staticmethod
    def _edit_args(path: str, repair: Any, lines: dict[int, str]) -> dict[str, Any]:
        prev = lines.get(repair.lineno - 1)
        old = f"{prev}\n{repair.old}" if prev is not None else repair.old
        new = f"{prev}\n{repair.new}" if prev is not None else repair.new
        return {"path": path, "old": old, "new": new}

    def _unchecked_edit(self, unit: str, ctx: Recall) -> dict[str, Any] | None:
        """Its last applied edit of this unit if not undone yet, with ``failed``: whether a failing
        test run after it is recalled (then it undoes the edit before trying another)."""
        edits = self.reader.state.get("edits", [])
        mine = [i for i, e in enumerate(edits) if e.get("unit") == unit and e["applied"]]
        if not mine:
            return None
        last = edits[mine[-1]]
        if not self._recalls_edit(last, ctx, CHANGED):  # a forgotten edit: it works from what it read before
            return None
        if any(e["applied"] and not e.get("unit") and e.get("path") == last["path"] and e.get("old") == last["new"]
               and e.get("new") == last["old"] for e in edits[mine[-1] + 1:]):
            return None
        key = self.reader.facts.keys.get(unit, -1)
        after = ctx.recalled & (ctx.kind == TESTOUT) & (ctx.key == key) & (ctx.steps >= last["step"])
        quoted = self.reader.state.get("quoted_runs", set())
        failed = any(int(ctx.aux[i]) not in quoted for i in np.flatnonzero(after))
        return {**last, "failed": failed}


def _is_test(path: str) -> bool:
    from pushbench.tasks.swe.reader import is_test_path

    return is_test_path(path)


def _next_start(lines: dict[int, str], line: int) -> int:
    """Where to read next: the definition itself, or just past what was already read of it."""
    if line not in lines:
        return max(1, line - 2)
    end = line
    while end + 1 in lines:
        end += 1
    return end + 1


__all__ = ["SweMind"]
