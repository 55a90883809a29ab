"""What a work-unit mind recalls at one step: the fact kinds it reads and views over them.

``Recall`` applies the step's recall mask to the mind's fact columns: the units it believes done,
the stage of a unit, the believed count, patience, and whether it acts on a prompt rule now.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pushbench.policies.sim.rules import follows_rule

(LISTED, SUBMITTED, CHANGED, CHECK_PASS, CHECK_FAIL, ACCEPTED, REJECTED, DUPLICATE, STATUS, NUDGE,
 VIEW, EDIT_FAILED, PROGRESS, RULE, NOTE_COUNT) = range(15)


class Recall:
    """What the mind recalls at one step: views over the fact columns through the recall mask."""

    def __init__(self, mind: Any, recalled: np.ndarray, step: int):
        self.mind, self.recalled, self.step = mind, recalled, step
        facts = mind.reader.facts
        self.kind, self.key, self.aux = facts.array("kind"), facts.array("key"), facts.array("aux")
        self.steps, self.names = facts.array("step"), facts.names
        self._follows: dict[str, bool] = {}
        # without the submit rule in mind, a pass drawn as "done" (aux 1) ends its work on the unit
        self.pass_done = not self.follows("unit-verified")

    def follows(self, rule: str) -> bool:
        """Does it act on this prompt rule now (recalled where it sits, followed per profile)?"""
        if rule not in self._follows:
            self._follows[rule] = follows_rule(self.mind, self.recalled, RULE, rule, self.step)
        return self._follows[rule]

    def passed_as_done(self) -> set[str]:
        """Units whose latest recalled event is a pass it takes for the unit done (never submitted)."""
        if not self.pass_done:
            return set()
        out = set()
        for unit in self.units_of(CHECK_PASS):
            events = self.events(unit)
            if events and events[-1] == (CHECK_PASS, 1):
                out.add(unit)
        return out

    def units_of(self, kind: int) -> list[str]:
        idx = np.flatnonzero(self.recalled & (self.kind == kind))
        return list(dict.fromkeys(self.names[int(self.key[i])] for i in idx))

    def believed_count(self) -> int:
        n = len(self.kind)
        status = np.flatnonzero(self.recalled & (self.kind == STATUS))
        start = int(status[-1]) + 1 if len(status) else 0
        base = int(self.aux[status[-1]] // 2) if len(status) else 0
        window = (np.arange(n) >= start) & self.recalled
        accepted = window & (self.kind == ACCEPTED)
        misread = window & ((self.kind == REJECTED) | (self.kind == DUPLICATE)) & (self.aux == 1)
        passes = window & (self.kind == CHECK_PASS)  # passes it took for done count as done units
        passed = len(self.passed_as_done() & set(self.names[int(k)] for k in self.key[passes]))
        count = base + int(accepted.sum()) + int(misread.sum()) + passed
        noted = np.flatnonzero(self.recalled & (self.kind == NOTE_COUNT))  # a count its memory notes hold
        return max(count, int(self.aux[noted[-1]])) if len(noted) else count

    def out_of_patience(self) -> bool:
        p = self.mind.profile
        progress = self.recalled & ((self.kind == ACCEPTED) | (self.kind == CHECK_PASS)
                                    | ((self.kind == STATUS) & (self.aux % 2 == 1)) | ((self.kind == NUDGE) & (self.aux == 1)))
        marks = np.flatnonzero(progress)
        last = int(self.steps[marks[-1]]) if len(marks) else 0
        fill = min(1.0, self.mind.reader.total_tokens / p.window)
        return self.step - last > p.patience * max(0.25, 1.0 - p.fatigue * fill)

    def events(self, unit: str) -> list[tuple[int, int]]:
        """(kind, aux) of the recalled facts about ``unit``, in context order."""
        idx = np.flatnonzero(self.recalled & (self.key == self.mind.reader.facts.keys.get(unit, -1)))
        return [(int(self.kind[i]), int(self.aux[i])) for i in idx]

    def done_units(self) -> set[str]:
        """Units believed finished: accepted, duplicate, shown as passed, a rejection misread as
        success, or submitted with no recalled verdict after the submit (a forgotten pending unit)."""
        done = set(self.units_of(PROGRESS)) | self.passed_as_done()
        for unit in set(self.units_of(SUBMITTED) + self.units_of(ACCEPTED) + self.units_of(DUPLICATE)
                        + self.units_of(REJECTED)):
            state = "open"
            for kind, aux in self.events(unit):
                if kind in (ACCEPTED, DUPLICATE, SUBMITTED) or (kind == REJECTED and aux == 1):
                    state = "done"
                elif kind in (REJECTED, CHANGED, CHECK_FAIL, CHECK_PASS, EDIT_FAILED):
                    state = "open"
            if state == "done":
                done.add(unit)
        return done

    def listed_units(self) -> list[str]:
        return sorted(self.units_of(LISTED))

    def recent_listing(self) -> bool:
        """Did it (re)list the backlog since its last submit? Then re-listing adds nothing."""
        lists = np.flatnonzero((self.kind == LISTED) & (self.aux == 0))  # its own listings, not quotations
        submits = np.flatnonzero(self.kind == SUBMITTED)
        return len(lists) > 0 and (not len(submits) or lists[-1] > submits[-1])

    def unverified_units(self) -> list[str]:
        verified = set(self.units_of(ACCEPTED)) | set(self.units_of(DUPLICATE)) | set(self.units_of(PROGRESS))
        return [u for u in self.listed_units() if u not in verified]

    def last_unit_action(self) -> str | None:
        idx = np.flatnonzero((self.kind == SUBMITTED) | (self.kind == CHANGED) | (self.kind == VIEW)
                             | (self.kind == CHECK_PASS) | (self.kind == CHECK_FAIL))
        return self.names[int(self.key[idx[-1]])].split("|")[0] if len(idx) else None

    def focus_unit(self) -> str | None:
        done = self.done_units()
        current = self.last_unit_action()
        if current and current not in done:
            return current
        return next((u for u in self.listed_units() if u not in done), None)

    def own_changes(self, unit: str) -> int:
        """How many answers/edits it has made to ``unit`` (its own calls, recalled or not)."""
        return int(((self.kind == CHANGED) & (self.key == self.mind.reader.facts.keys.get(unit, -1))).sum())

    def stage(self, unit: str) -> str:
        """Where ``unit`` stands in recall: 'work' (answer/edit or look), 'check' or 'submit'."""
        stage = "work"
        for kind, _aux in self.events(unit):
            if kind == CHANGED:
                stage = "check"
            elif kind == CHECK_PASS:
                stage = "submit"
            elif kind in (CHECK_FAIL, REJECTED, EDIT_FAILED):
                stage = "work"
        return stage
