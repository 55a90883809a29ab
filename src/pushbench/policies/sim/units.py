"""SimLM on work-unit backlogs: the shared part of the DataOps-lite and SWE-lite minds.

``UnitMind`` parses the shared tool outputs (``tools/units.py``: backlog listing, checker results,
submit verdicts, status lines, and the ``[progress]``/``[controller]`` lines UnitQGP adds) into
facts with token offsets, and decides under bounded attention:
- beliefs come only from recalled facts: which units exist (the listing can be partly forgotten),
  which were submitted/accepted, the believed accepted count (latest recalled status plus recalled
  accepts, plus rejected/duplicate verdicts mistaken for progress per ``conflate``);
- per unit it goes evidence -> answer/edit -> checker -> submit; after a FAIL or a rejection it
  tries again;
- prompt rules (``guidance.prompt_rules``) are facts where the prompt states them, acted on when
  recalled and followed (``rules.py``). The objective's rule that a unit counts only if its check
  passes at submit (``unit-verified``) gates two failures: without it in mind, after an answer or
  edit it skips the checker with probability ``skip_checker`` (a missing verifier call), and it takes
  a recalled pass for the unit done with probability ``pass_as_done`` (fixed per unit and pass),
  moving on without submitting and counting the unit (a no-submit loop: the unit stays passed but
  unaccepted until something sends it back); a forgotten pass is checked again instead of submitted;
  the status rule (``status-final``) makes it call ``status()`` before ``final`` and keep going when
  out of patience;
- stale inspection: only a recalled edit of its own marks what it read before as stale (the family
  minds), so a forgotten edit leaves it acting on the old page;
- a blocked final: followed, it takes the notice's verified count as its count and resumes work;
  not followed, it still believes the target reached and repeats ``final`` (or checks ``status()``
  per ``check_status``) instead of working;
- it forgets: a unit whose submit it recalls but not the verdict counts as done (a pending unit
  forgotten), a unit whose acceptance it forgot is redone and resubmitted (a duplicate);
- it claims completion from its believed count, gives up when steps without recalled progress
  exceed a patience that shrinks as the context fills, and follows controller lines with
  probability ``follow_guidance``: submit-now and check-next instructions, a fix instruction for a
  unit whose checker failed (it answers/edits that unit again), the every-unit-accepted instruction
  (final with the verified count of the progress block), a repeat refusal (it does not issue that
  call again next step but works on another open unit) and an already-accepted refusal (it records
  the unit as accepted, like a passed unit of the progress block).
Memory notes (core blocks, summaries, archive passages: ``submitted:``, ``pending:``, ``progress:``)
are read as units done, units listed and a remembered count (``memory_skills.py`` writes them).
A family subclass implements ``parse_extra`` (its own tool outputs) and ``work`` (the next
evidence-gathering call or the answer/edit for one unit, from recalled evidence only).
"""

from __future__ import annotations

import json
import re
from typing import Any

from pushbench.guidance import PROGRESS as PROGRESS_LINE
from pushbench.guidance import (ALL_ACCEPTED, ALREADY_ACCEPTED, BLOCKED, BLOCKED_MARK, CHECK_NOW, FAILED_UNCHANGED,
                                 NEXT_UNIT, REPEATED, SUBMIT_NOW, UNIT_LINE, note_facts, progress_passed, prompt_rules,
                                 quoted_blocks, retrieved_items)
from pushbench.policies.base import Turn, text_message, tool_call_message, turn_from_message
from pushbench.policies.sim.attention import recalled_mask, stable_uniform
from pushbench.policies.sim.memory import ContextReader, Mind
from pushbench.policies.sim.memory_skills import MEMORY_TOOLS
from pushbench.policies.sim.unit_recall import (ACCEPTED, CHANGED, CHECK_FAIL, CHECK_PASS, DUPLICATE, EDIT_FAILED,
                                                 LISTED, NOTE_COUNT, NUDGE, PROGRESS, REJECTED, RULE, STATUS,
                                                 SUBMITTED, VIEW, Recall)

VERDICT_KIND = {"accepted": ACCEPTED, "rejected": REJECTED, "duplicate": DUPLICATE}

_CHECK = re.compile(r"^checker (\S+): (PASS|FAIL)$")
_VERDICT = re.compile(r"^submit (\S+): (accepted|rejected|duplicate)\b")
_STATUS = re.compile(r"^status: (\d+) units accepted \(verified\) of target (\d+)")
# Backlog/next-unit lines, progress blocks, blocked final and the controller's submit/check
# instructions are read through pushbench.guidance, the vocabulary UnitQGP renders with.


class UnitMind(Mind):
    parse_replayable = True  # policies/sim/memory.py's contract (a subclass declares it again)
    checker_tool = "run_checker"
    objective_pattern = re.compile(r"backlog of (\d+)\b")

    # --- reading -------------------------------------------------------------------------------
    def _parse(self, reader: ContextReader, message: dict[str, Any], offset: int, step: int) -> None:
        role, facts, state = message.get("role"), reader.facts, reader.state
        content = message.get("content") or ""
        step -= state.get("memory_turns", 0)  # memory calls are not steps
        if role in ("user", "system"):  # instructions are facts where they sit (guidance.prompt_rules)
            for rule in prompt_rules(content):
                facts.add(RULE, offset, step, rule)
        if role == "user" and "target" not in state:
            m = self.objective_pattern.search(content)
            state["target"] = int(m.group(1)) if m else None
            state.setdefault("titles", {})
            return
        if role == "assistant":
            for call in message.get("tool_calls") or []:
                if call.get("function", {}).get("name") in MEMORY_TOOLS:
                    state["memory_turns"] = state.get("memory_turns", 0) + 1
                self._parse_call(facts, call.get("function", {}), offset, step)
            return
        if role == "system":  # memory notes a memory renders there (core blocks)
            for line in content.splitlines():
                self._parse_note(facts, line, offset, step)
            return
        if role != "tool" and role != "user":
            return
        self.parse_extra(reader, content, offset, step)
        for line in content.splitlines():
            self._parse_line(reader, line, offset, step)
        for block in quoted_blocks(content):
            self.parse_quoted(reader, block, offset, step)
        for _, role, item in retrieved_items(content):  # a store's retrieved tool results, shown again
            if role == "tool":
                self.parse_retrieved(reader, item, offset, step)

    def _parse_call(self, facts: Any, fn: dict[str, Any], offset: int, step: int) -> None:
        try:
            args = json.loads(fn.get("arguments") or "{}")
        except json.JSONDecodeError:
            return
        unit = str(args.get("unit", "")) if isinstance(args, dict) else ""
        if not unit:
            return
        if fn.get("name") == "submit":
            facts.add(SUBMITTED, offset, step, unit)
        elif fn.get("name") in ("answer", "edit"):
            facts.add(CHANGED, offset, step, unit)

    def _parse_line(self, reader: ContextReader, line: str, offset: int, step: int) -> None:
        facts, state = reader.facts, reader.state
        if m := UNIT_LINE.match(line):
            state["titles"][m.group(1)] = m.group(3)
            facts.add(LISTED, offset, step, m.group(1))
        elif m := _CHECK.match(line):
            # aux on a pass: would it take this pass for the unit done, were the submit rule not in mind?
            as_done = stable_uniform(self.seed, "pass-done", m.group(1), step) < self.profile.pass_as_done
            facts.add(CHECK_PASS if m.group(2) == "PASS" else CHECK_FAIL, offset, step, m.group(1), int(as_done))
        elif m := _VERDICT.match(line):
            misread = stable_uniform(self.seed, "conflate", m.group(1), step) < self.profile.conflate
            facts.add(VERDICT_KIND[m.group(2)], offset, step, m.group(1), int(misread and m.group(2) != "accepted"))
        elif (m := _STATUS.match(line)) or (m := PROGRESS_LINE.match(line)):
            count = int(m.group(1))
            rising = count > state.get("last_status", 0)
            state["last_status"] = max(count, state.get("last_status", 0))
            facts.add(STATUS, offset, step, "", count * 2 + int(rising))
            if m.re is PROGRESS_LINE:
                for unit in progress_passed(line):
                    facts.add(PROGRESS, offset, step, unit)
        elif m := ALREADY_ACCEPTED.match(line):
            if stable_uniform(self.seed, "follow", m.group(1), step) < self.profile.follow_guidance:
                facts.add(PROGRESS, offset, step, m.group(1))
        elif line.startswith(BLOCKED_MARK):
            followed = stable_uniform(self.seed, "follow", step) < self.profile.follow_guidance
            facts.add(NUDGE, offset, step, "", int(followed))
            if followed and (m := BLOCKED.match(line)):  # it takes the notice's verified count as its count
                facts.add(STATUS, offset, step, "", int(m.group(1)) * 2)
        elif line.startswith("ERROR: edit "):
            facts.add(EDIT_FAILED, offset, step, line.split()[2].rstrip(":"))
        else:  # a quoted earlier verdict (a memory's recall or view), or a memory note of its own
            self._parse_note(facts, line, offset, step)

    @staticmethod
    def _parse_note(facts: Any, line: str, offset: int, step: int) -> None:
        """A memory note (guidance.note_facts): a unit done (accepted), or a remembered count."""
        for name, unit, aux in note_facts(line):
            if name == "done":
                facts.add(PROGRESS, offset, step, unit)
            elif name == "pending":  # a unit of the backlog, noted (aux 1: not its own listing)
                facts.add(LISTED, offset, step, unit, 1)
            elif name == "count":
                facts.add(NOTE_COUNT, offset, step, "", aux)

    def parse_extra(self, reader: ContextReader, content: str, offset: int, step: int) -> None:
        """Family outputs (pages read, test output); record facts in ``reader.facts``."""

    def parse_quoted(self, reader: ContextReader, text: str, offset: int, step: int) -> None:
        """A quotation of an earlier message (a memory's view or search result), read where it sits.
        Only what does not depend on when it was shown is read from it: backlog entries here (aux 1:
        quoted), the family's evidence (pages, test output) in subclasses. Its checker results and
        verdicts are undated, so they are not read as new events (``note_facts`` reads quoted
        acceptances as units done)."""
        for line in text.splitlines():
            if m := UNIT_LINE.match(line):
                reader.state["titles"].setdefault(m.group(1), m.group(3))
                reader.facts.add(LISTED, offset, step, m.group(1), 1)

    def parse_retrieved(self, reader: ContextReader, text: str, offset: int, step: int) -> None:
        """An earlier tool result a memory shows again unquoted (a LangGraph store's retrieved item),
        read where the memory's message sits. Its lines are read as lines of that message already;
        a family reads its own evidence (pages, test output) from it here, as from a quotation."""

    # --- family hook ----------------------------------------------------------------------------
    def work(self, unit: str, title: str, ctx: Recall, attempt: int) -> tuple[str, dict[str, Any]] | None:
        """The next call for ``unit``: a look at evidence, or the answer/edit (None: no idea)."""
        raise NotImplementedError

    # --- deciding -------------------------------------------------------------------------------
    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Turn:
        self.reader.update(messages, tools)
        step = self.reader.assistant_turns - self.reader.state.get("memory_turns", 0)
        target = self.reader.state.get("target")
        call_id = f"call_{step}"
        if not target:
            return Turn(text_message("I cannot tell what the task asks for."), None)
        facts = self.reader.facts
        ctx = Recall(self, recalled_mask(self.profile, facts.array("offset"), self.reader.total_tokens,
                                         self.seed, step), step)
        last = (messages[-1].get("content") or "") if messages else ""
        count = ctx.believed_count()
        nudged = BLOCKED_MARK in last
        if nudged and stable_uniform(self.seed, "follow", step) >= self.profile.follow_guidance:
            return self._blocked_loop(count, step, call_id)  # it believes the final earned: final or status again
        ruled = ctx.follows("status-final")  # the prompt's rule: no final before status() reports the target
        if count >= target and not nudged:
            if "status:" not in last and (ruled or stable_uniform(self.seed, "status", step) < self.profile.check_status):
                return self._call("status", {}, call_id)
            return self._call("final", {"count": count}, call_id)
        if not nudged and ctx.out_of_patience():
            if ruled:  # the rule says do not stop short of the target: look at the verified count and go on
                if "status:" not in last:
                    return self._call("status", {}, call_id)
            elif stable_uniform(self.seed, "claim", step) < self.profile.claim_on_stop:
                return self._call("final", {"count": count}, call_id)
            else:
                return Turn(text_message(f"I have finished about {count} units and will stop here."), None)
        follows = stable_uniform(self.seed, "guide", step) < self.profile.follow_guidance
        guided = self._guided(last, step, ctx, count) if follows else None
        if guided:
            return self._call(*guided, call_id)
        unit = ctx.focus_unit()
        if unit is None:
            turn = self._no_focus(ctx, count, call_id)
        else:
            turn = self._call(*self._unit_step(unit, ctx), call_id)
        if follows and REPEATED in last.splitlines() and turn.call is not None:
            previous = _last_call(messages)
            if previous is not None and _same_call(previous, (turn.call.name, turn.call.arguments), tools):
                return self._call(*self._other_than(previous, last, ctx, tools), call_id)
        return turn

    def _call(self, name: str, args: dict[str, Any], call_id: str) -> Turn:
        return turn_from_message(tool_call_message(name, args, call_id))

    def _blocked_loop(self, count: int, step: int, call_id: str) -> Turn:
        """A blocked final it does not take the notice's count from: it still believes the target
        reached, so it asks again (final) or checks (status, per ``check_status``) instead of working."""
        if stable_uniform(self.seed, "status", step) < self.profile.check_status:
            return self._call("status", {}, call_id)
        return self._call("final", {"count": count}, call_id)

    def _guided(self, last: str, step: int, ctx: Recall, count: int) -> tuple[str, dict[str, Any]] | None:
        """Explicit controller instructions in the latest observation (the caller drew whether it follows)."""
        lines = last.splitlines()
        for line in lines:
            if m := SUBMIT_NOW.match(line):
                return "submit", {"unit": m.group(1)}
            if m := CHECK_NOW.match(line):
                if stable_uniform(self.seed, "skip", m.group(1), step) >= self.profile.skip_checker:
                    return self.checker_tool, {"unit": m.group(1)}
            if m := FAILED_UNCHANGED.match(line):  # fix it: the work step of a unit whose checker failed
                unit = m.group(1)
                action = self.work(unit, self.reader.state["titles"].get(unit, ""), ctx, ctx.own_changes(unit))
                if action is None:
                    return "inspect", {"unit": unit}
                if action != ("submit", {"unit": unit}):  # a resubmit would be refused again
                    return action
            if line == ALL_ACCEPTED:  # final with the verified count the progress block shows
                verified = next((int(p.group(1)) for text in lines if (p := PROGRESS_LINE.match(text))), count)
                return "final", {"count": verified}
        return None

    def _other_than(self, previous: tuple[str, dict[str, Any]], last: str, ctx: Recall,
                    tools: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
        """Its next-best call after a repeat refusal: the step of another open unit (the controller's
        next unit first), else a look at the backlog or the status."""
        avoid = previous[1].get("unit")
        done = ctx.done_units()
        named = [m.group(1) for line in last.splitlines() if (m := NEXT_UNIT.match(line))]
        for unit in dict.fromkeys(named + ctx.listed_units()):
            if unit != avoid and unit not in done:
                choice = self._unit_step(unit, ctx)
                if not _same_call(previous, choice, tools):
                    return choice
        return ("status", {}) if previous[0] == "list_units" else ("list_units", {})

    def _no_focus(self, ctx: Recall, count: int, call_id: str) -> Turn:
        """Every recalled unit looks done but the count is short: re-list, or resubmit to re-verify."""
        if not ctx.recent_listing():
            return self._call("list_units", {}, call_id)
        unverified = ctx.unverified_units()
        if unverified:
            return self._call("submit", {"unit": unverified[0]}, call_id)
        if stable_uniform(self.seed, "claim", ctx.step) < self.profile.claim_on_stop:
            return self._call("final", {"count": count}, call_id)
        return Turn(text_message("I believe every unit is done."), None)

    def _unit_step(self, unit: str, ctx: Recall) -> tuple[str, dict[str, Any]]:
        stage = ctx.stage(unit)
        attempt = ctx.own_changes(unit)  # draws per attempt: a retry is a fresh try, not a replay
        if stage == "submit":
            return "submit", {"unit": unit}
        if stage == "check":  # without the rule in mind it may submit unchecked (a missing verifier call)
            if not ctx.follows("unit-verified") and \
                    stable_uniform(self.seed, "skip", unit, attempt) < self.profile.skip_checker:
                return "submit", {"unit": unit}
            return self.checker_tool, {"unit": unit}
        title = self.reader.state["titles"].get(unit, "")
        action = self.work(unit, title, ctx, attempt)
        if action is None:
            return "inspect", {"unit": unit}
        return action


def _last_call(messages: list[dict[str, Any]]) -> tuple[str, dict[str, Any]] | None:
    """Its latest tool call in the context (name, arguments)."""
    for message in reversed(messages):
        if message.get("role") == "assistant" and message.get("tool_calls"):
            fn = message["tool_calls"][-1].get("function", {})
            if fn.get("name") in MEMORY_TOOLS:  # its memory calls are not the call a repeat refusal means
                continue
            try:
                args = json.loads(fn.get("arguments") or "{}")
            except json.JSONDecodeError:
                return None
            return str(fn.get("name")), args if isinstance(args, dict) else {}
    return None


def _same_call(a: tuple[str, Any], b: tuple[str, Any], tools: list[dict[str, Any]]) -> bool:
    """The same call once the offered schema's defaults are filled in (``inspect(U)`` is ``inspect(U, page=1)``)."""
    def full(name: str, args: Any) -> tuple[str, str]:
        if isinstance(args, str):
            try:
                args = json.loads(args or "{}")
            except json.JSONDecodeError:
                return name, args
        props: dict[str, Any] = next((t.get("function", {}).get("parameters", {}).get("properties", {}) for t in tools
                      if t.get("function", {}).get("name") == name), {})
        defaults = {k: v["default"] for k, v in props.items() if isinstance(v, dict) and "default" in v}
        return name, json.dumps({**defaults, **(args or {})}, sort_keys=True, default=str)
    return full(*a) == full(*b)


# the fact kinds and Recall live in unit_recall; the family minds import them from here
__all__ = ["ACCEPTED", "CHANGED", "CHECK_FAIL", "CHECK_PASS", "DUPLICATE", "EDIT_FAILED", "LISTED", "NOTE_COUNT",
           "NUDGE", "PROGRESS", "REJECTED", "RULE", "STATUS", "SUBMITTED", "VIEW", "Recall", "UnitMind"]
