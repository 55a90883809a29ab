"""SimLM on RepoScan: read hits, verdicts and progress from the context; act on what is recalled.

Failure modes arise from mechanisms, not coin flips at the end:
- forgetting a submission makes a hit that reappears under another query look new (duplicate);
- forgetting which pages of a query were read makes it read them again (repeated search);
- counting accepted items from memory, conflating some rejected/duplicate verdicts with progress
  and missing forgotten ones, makes ``final`` come early (false completion) or the reported count
  differ from the verified one;
- steps without recalled progress exhaust patience, which shrinks as the context fills (premature stop);
- candidates read on earlier pages but forgotten before the batch submit are lost.

Hits quoted in a memory's message (a decision view, a search result) are judged like hits on a
page, where that message sits; quoted verdicts and search headers are memory notes (an id done, a
page read), never new verdicts or the current page.

Prompt rules (``guidance.prompt_rules``, e.g. the black-box checklist) are facts where the prompt
states them; when one is recalled and followed (``policies/sim/rules.py``): the status rule makes it
call ``status()`` before ``final`` and, out of patience, check ``status()`` and keep going instead of
stopping; the submitted-list rule makes it write the ids it recalls submitting (plus the new ones)
into its submit message, a list it reads back as memory notes.
"""

from __future__ import annotations

import json
from types import SimpleNamespace
import re
from collections import Counter
from typing import Any

import numpy as np

from pushbench.guidance import (ALL_READ, BLOCKED_MARK, BUFFER_MARK, PROGRESS, note_facts, progress_read, prompt_rules,
                                quoted_blocks, submitted_note)
from pushbench.policies.base import Turn, text_message, tool_call_message, turn_from_message
from pushbench.policies.sim.attention import recalled_mask, stable_uniform
from pushbench.policies.sim.memory import ContextReader, Mind
from pushbench.policies.sim.memory_skills import MEMORY_TOOLS
from pushbench.policies.sim.rules import follows_rule
from pushbench.tasks.reposcan.reader import Goal, expansion_terms, judge_hit, name_tokens, parse_objective

HIT_VALID, HIT_INVALID, PAGE, SUBMITTED, ACCEPTED, REJECTED, DUPLICATE, STATUS, NUDGE = range(9)
MEM_COUNT, MEM_DONE, MEM_PAGE = 9, 10, 11  # from memory notes (guidance.note_facts): count, id done, page read
RULE = 12  # a prompt rule (guidance.prompt_rules), where the prompt states it
NOTE_KIND = {"count": MEM_COUNT, "done": MEM_DONE, "page": MEM_PAGE}
VERDICT_KIND = {"accepted": ACCEPTED, "rejected": REJECTED, "duplicate": DUPLICATE}

_SEARCH = re.compile(r'^search "(.*)": page (\d+) of (\d+) \(\d+ results\)$')
_EMPTY = re.compile(r'^search "(.*)": no results on page (\d+) \(\d+ results in (\d+) pages?\)')
_HIT = re.compile(r"^\[(\d+)\] (\S+)$")
_LINE = re.compile(r"^    L(\d+): (.*)$")
_VERDICT = re.compile(r"^  (accepted|rejected|duplicate)\s+(\S+)$")
_STATUS = re.compile(r"^status: (\d+) accepted \(verified\) of target (\d+)")
_MAX_SUBMIT = re.compile(r"at most (\d+) identifiers", re.I)
# Controller guidance (progress blocks, blocked final, all pages read, buffered hits) and memory
# notes are read through pushbench.guidance, the vocabulary controllers and memories render with.


def _hits(text: str) -> list[tuple[str, list[tuple[int, str]]]]:
    """The search hits in a text: each ``[n] id`` line with the matched lines under it."""
    hits: list[tuple[str, list[tuple[int, str]]]] = []
    for line in text.splitlines():
        if m := _HIT.match(line):
            hits.append((m.group(2), []))
        elif (m := _LINE.match(line)) and hits:
            hits[-1][1].append((int(m.group(1)), m.group(2)))
        else:
            hits.append(("", []))  # anything else ends the hit before it
    return [(uid, lines) for uid, lines in hits if uid]


class RepoScanMind(Mind):
    """Everything SimLM does on a RepoScan episode, for one profile and episode seed."""

    # the fact kinds SimLM's memory skills read and write (policies/sim/memory_skills.py)
    parse_replayable = True  # policies/sim/memory.py's contract
    kinds = SimpleNamespace(PAGE=PAGE, SUBMITTED=SUBMITTED, ACCEPTED=ACCEPTED, REJECTED=REJECTED,
                            DUPLICATE=DUPLICATE, MEM_DONE=MEM_DONE, MEM_PAGE=MEM_PAGE, STATUS_LINE=_STATUS)

    # --- reading ---------------------------------------------------------------------------
    def _parse(self, reader: ContextReader, message: dict[str, Any], offset: int, step: int) -> None:
        role, facts, state = message.get("role"), reader.facts, reader.state
        content = message.get("content") or ""
        step -= state.get("memory_turns", 0)  # internal memory calls are not steps
        if role in ("user", "system"):
            for rule in prompt_rules(content):
                facts.add(RULE, offset, step, rule)
        if role == "user" and "goal" not in state:
            state["goal"] = parse_objective(content)
            return
        if role == "assistant":
            for line in str(message.get("content") or "").splitlines():  # its own written list (a rule)
                self._add_notes(facts, note_facts(line), offset, step)
            for call in message.get("tool_calls") or []:
                fn = call.get("function", {})
                if fn.get("name") in MEMORY_TOOLS:
                    state["memory_turns"] = state.get("memory_turns", 0) + 1
                if fn.get("name") == "submit":
                    try:
                        ids = json.loads(fn.get("arguments") or "{}").get("ids", [])
                    except (json.JSONDecodeError, AttributeError):
                        ids = []
                    for uid in ids if isinstance(ids, list) else []:
                        facts.add(SUBMITTED, offset, step, str(uid))
            return
        if role == "system":  # only memory notes (core memory blocks) are read from it
            for line in content.splitlines():
                self._add_notes(facts, note_facts(line), offset, step)
            return
        goal: Goal | None = state.get("goal")
        hit_uid: str | None = None
        hit_lines: list[Any] = []

        def flush() -> None:
            if hit_uid and goal:
                facts.add(self._judge(goal, hit_uid, hit_lines), offset, step, hit_uid)

        for line in content.splitlines():
            if (m := _LINE.match(line)) and hit_uid:
                hit_lines.append((int(m.group(1)), m.group(2)))
                continue
            flush()
            hit_uid, hit_lines = None, []
            if m := _HIT.match(line):
                hit_uid = m.group(2)
            elif m := _SEARCH.match(line):
                facts.add(PAGE, offset, step, m.group(1), int(m.group(2)) * 1000 + int(m.group(3)))
            elif m := _EMPTY.match(line):
                pages = int(m.group(3))
                facts.add(PAGE, offset, step, m.group(1), max(int(m.group(2)), pages) * 1000 + pages)
            elif m := _VERDICT.match(line):
                # aux: would this verdict be mistaken for progress when counting from memory?
                misread = stable_uniform(self.seed, "conflate", m.group(2), step) < self.profile.conflate
                facts.add(VERDICT_KIND[m.group(1)], offset, step, m.group(2), int(misread))
            elif m := ALL_READ.match(line):
                pages = int(m.group(1))
                facts.add(PAGE, offset, step, m.group(2), pages * 1000 + pages)
            elif (m := _STATUS.match(line)) or (m := PROGRESS.match(line)):
                if m.re is PROGRESS:  # the controller's record of pages read
                    state["progress_read"] = progress_read(line)
                count = int(m.group(1))
                rising = count > state.get("last_status", 0)
                state["last_status"] = max(count, state.get("last_status", 0))
                facts.add(STATUS, offset, step, "", count * 2 + int(rising))
            elif line.startswith(BLOCKED_MARK):
                followed = stable_uniform(self.seed, "follow", step) < self.profile.follow_guidance
                facts.add(NUDGE, offset, step, "", int(followed))
            elif notes := note_facts(line):
                self._add_notes(facts, notes, offset, step)
        flush()
        if goal:
            for block in quoted_blocks(content):
                for uid, lines in _hits(block):
                    facts.add(self._judge(goal, uid, lines), offset, step, uid)

    @staticmethod
    def _add_notes(facts: Any, notes: list[tuple[str, str, int]], offset: int, step: int) -> None:
        for name, key, aux in notes:
            if name in NOTE_KIND:  # work-unit notes (pending units) say nothing here
                facts.add(NOTE_KIND[name], offset, step, key, aux)

    def _judge(self, goal: Goal, uid: str, lines: list[tuple[int, str]]) -> int:
        """The family reader's verdict on visible text, with the profile's noise (fixed per hit)."""
        verdict = judge_hit(goal, uid, lines)
        draw = stable_uniform(self.seed, "judge", uid)
        if verdict:
            return HIT_INVALID if draw < self.profile.false_negative else HIT_VALID
        return HIT_VALID if draw < self.profile.false_positive else HIT_INVALID

    # --- deciding --------------------------------------------------------------------------
    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Turn:
        self.reader.update(messages, tools)
        step = self.reader.assistant_turns - self.reader.state.get("memory_turns", 0)
        goal: Goal | None = self.reader.state.get("goal")
        call_id = f"call_{step}"
        if goal is None:
            return Turn(text_message("I cannot tell what the task asks for."), None)
        facts = self.reader.facts
        recalled = recalled_mask(self.profile, facts.array("offset"), self.reader.total_tokens, self.seed, step)
        kind, key = facts.array("kind"), facts.array("key")
        last = (messages[-1].get("content") or "") if messages else ""
        count = self._believed_count(recalled, kind, facts.array("aux"))
        nudged = BLOCKED_MARK in last
        if nudged and stable_uniform(self.seed, "follow", step) >= self.profile.follow_guidance:
            return self._final(count, call_id)
        ruled = follows_rule(self, recalled, RULE, "status-final", step)  # no final before status() shows N
        status = turn_from_message(tool_call_message("status", {}, call_id))
        if count >= goal.target and not nudged:
            if "status:" not in last and (ruled or stable_uniform(self.seed, "status", step) < self.profile.check_status):
                return status
            return self._final(count, call_id)
        if not nudged and self._out_of_patience(recalled, kind, facts.array("aux"), facts.array("step"), step):
            if ruled:  # the rule says do not stop short: look at the verified count, then go on
                if "status:" not in last:
                    return status
            elif stable_uniform(self.seed, "claim", step) < self.profile.claim_on_stop:
                return self._final(count, call_id)
            else:
                return Turn(text_message(f"I have found about {count} so far and will stop here."), None)
        submit = self._maybe_submit(recalled, kind, key, tools, BUFFER_MARK in last)
        if submit:
            message = tool_call_message("submit", {"ids": submit}, call_id)
            if follows_rule(self, recalled, RULE, "submitted-list", step):  # it writes its list of submitted ids
                done = key[recalled & ((kind == SUBMITTED) | (kind == MEM_DONE))].tolist()
                message["content"] = submitted_note(dict.fromkeys([*(facts.names[k] for k in done), *submit]))
            return turn_from_message(message)
        search = self._next_search(goal, recalled, kind, key, facts.array("aux"))
        if search is None:
            if count > 0 and stable_uniform(self.seed, "claim", step) < self.profile.claim_on_stop:
                return self._final(count, call_id)
            return Turn(text_message("I have run out of searches to try."), None)
        return turn_from_message(tool_call_message("search", {"query": search[0], "page": search[1]}, call_id))

    def _final(self, count: int, call_id: str) -> Turn:
        return turn_from_message(tool_call_message("final", {"count": int(count)}, call_id))

    def _believed_count(self, recalled: np.ndarray, kind: np.ndarray, aux: np.ndarray) -> int:
        n = len(kind)
        idx = np.arange(n)
        status = np.flatnonzero(recalled & (kind == STATUS))
        start = int(status[-1]) + 1 if len(status) else 0
        base = int(aux[status[-1]] // 2) if len(status) else 0
        window = (idx >= start) & recalled
        accepted = window & (kind == ACCEPTED)
        misread = window & ((kind == REJECTED) | (kind == DUPLICATE)) & (aux == 1)
        count = base + int(accepted.sum()) + int(misread.sum())
        noted = np.flatnonzero(recalled & (kind == MEM_COUNT))  # a remembered count: the latest one recalled
        return max(count, int(aux[noted[-1]])) if len(noted) else count

    def _out_of_patience(self, recalled: np.ndarray, kind: np.ndarray, aux: np.ndarray,
                         steps: np.ndarray, step: int) -> bool:
        progress = recalled & ((kind == ACCEPTED) | ((kind == STATUS) & (aux % 2 == 1)) | ((kind == NUDGE) & (aux == 1)))
        marks = np.flatnonzero(progress)
        last = int(steps[marks[-1]]) if len(marks) else 0
        fill = min(1.0, self.reader.total_tokens / self.profile.window)
        patience = self.profile.patience * max(0.25, 1.0 - self.profile.fatigue * fill)
        return step - last > patience

    def _maybe_submit(self, recalled: np.ndarray, kind: np.ndarray, key: np.ndarray,
                      tools: list[dict[str, Any]], from_buffer: bool) -> list[str]:
        names = self.reader.facts.names
        done = set(key[recalled & ((kind == SUBMITTED) | (kind == ACCEPTED) | (kind == REJECTED)
                                   | (kind == DUPLICATE) | (kind == MEM_DONE))].tolist())
        # The working batch: valid-looking hits read since the agent's own last submit. Older
        # unsubmitted hits are not pursued unless something shows them again (lost candidates).
        submits = np.flatnonzero(kind == SUBMITTED)
        after = int(submits[-1]) if len(submits) else -1
        since = np.arange(len(kind)) > after
        candidates: list[int] = []
        for k in key[recalled & since & (kind == HIT_VALID)].tolist():
            if k not in done:
                done.add(k)
                candidates.append(k)
        if not candidates:
            return []
        pages_read = int(((kind == PAGE) & (np.arange(len(kind)) > after)).sum())
        limit = self._max_submit(tools)
        exhausted = self._current_query_exhausted(kind, key)
        if from_buffer or pages_read >= self.profile.pages_per_submit or exhausted or len(candidates) >= limit:
            return [names[k] for k in candidates[:limit]]
        return []

    def _max_submit(self, tools: list[dict[str, Any]]) -> int:
        for spec in tools:
            fn = spec.get("function", {})
            if fn.get("name") == "submit" and (m := _MAX_SUBMIT.search(fn.get("description", ""))):
                return int(m.group(1))
        return 10

    def _current_query_exhausted(self, kind: np.ndarray, key: np.ndarray) -> bool:
        pages = np.flatnonzero(kind == PAGE)
        if not len(pages):
            return False
        aux = int(self.reader.facts.array("aux")[pages[-1]])
        return aux // 1000 >= aux % 1000

    def _next_search(self, goal: Goal, recalled: np.ndarray, kind: np.ndarray, key: np.ndarray,
                     aux: np.ndarray) -> tuple[str, int] | None:
        names = self.reader.facts.names
        noted = recalled & (kind == MEM_PAGE)  # pages a memory note says were read
        pages = np.flatnonzero(kind == PAGE)
        if not len(pages) and noted.any():
            pages = np.flatnonzero(noted)
        if not len(pages):
            return goal.seed_query, 1
        current = int(key[pages[-1]])
        seen = [int(aux[i]) for i in pages if (recalled[i] or i == pages[-1]) and key[i] == current]
        seen += [int(a) for a in aux[noted & (key == current)]]
        read, total = max(a // 1000 for a in seen), seen[-1] % 1000
        shown = self.reader.state.get("progress_read", {})  # state a controller shows every step
        if names[current] in shown:
            read = max(read, shown[names[current]][0])
        if read < total:
            return names[current], read + 1
        used = {names[int(key[i])] for i in pages if recalled[i]} | {names[current]} | set(shown)
        used |= {names[int(k)] for k in key[noted]}
        words: Counter[str] = Counter()
        for k in key[recalled & (kind == HIT_VALID)].tolist():
            words.update(name_tokens(names[k]))
        options = expansion_terms(goal, words, used)
        if goal.seed_query not in used:
            options.insert(0, goal.seed_query)
        return (options[0], 1) if options else None
