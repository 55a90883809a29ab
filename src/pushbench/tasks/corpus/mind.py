"""SimLM on the corpus family: it knows a fact only from a search hit or a document it recalls.

Every step it rebuilds its beliefs from the facts it recalls (bounded attention, ``attention.py``):
the clues of the question (each a fact at the objective's position), the queries it ran, the hits
it saw and the documents it opened. Then:

1. an unresolved ``module`` clue is searched by its quote; the module is known once a module
   document it opened shows the quote;
2. the head clue (``terms``/``param``) is searched with the module found so far; every docstring
   hit it recalls is a candidate, in order of appearance;
3. for the first candidate not yet ruled out, each recalled clue it has not settled is checked:
   open the candidate's docstring document, or run the clue's search for it and open the hits whose
   title fits the clue. A per-clue reader (``reader.supports``, with the profile's false positives
   and negatives, fixed per clue, document and candidate) decides each opened document;
4. each search and open names the clue it works on (the `requirement` argument), so every
   memory gets the same origins; it answers once a candidate meets every clue it recalls now (a forgotten clue goes unchecked:
   hard negatives win there), with a confidence from the share of all clues it has seen met.

Memory: results a memory shows again (ACG's quotes, the store's items, a summary's quotations) are
read as the results they quote; its own notes (``notes.py``: searches run, candidates in play with
their documents) are read back from a summary, memgpt's core block or an archival passage, each a
fact where it sits, and a noted candidate is checked as a hit's would be.

Forgetting a query or an opened document makes it search or open again (repeated work); a
controller's "repeats your previous call" notice (``guidance.REPEATED``) is followed with the
profile's ``follow_guidance``: the repeated call counts as done.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

from pushbench.guidance import (ACG_EVIDENCE, CONDENSED, EVICTED, REPEATED, note_facts, quoted_blocks,
                                retrieved_items)
from pushbench.policies.base import Turn, text_message, tool_call_message, turn_from_message
from pushbench.policies.sim.attention import recalled_mask, stable_uniform
from pushbench.policies.sim.memory import ContextReader, Mind
from pushbench.policies.sim.memory_skills import MEMORY_TOOLS, offered
from pushbench.tasks.corpus.notes import NOTED_ITEM, archive_first, due_memory_call, notes
from pushbench.tasks.corpus.parts import parts_of, solve_parts
from pushbench.tasks.corpus.plan import CLUE, DOC, HIT, NOTED, ORDER, QUERY, Plan, Recalled
from pushbench.tasks.corpus.reader import CLUE_LINE, Clue, parse_clue, supports

_SEARCH = re.compile(r'^search "(.*)": (?:top \d+ documents|no documents match)')
_HIT = re.compile(r"^\[(\d+)\] (d[0-9a-f]{10}) \| (.+)$")
_DOC = re.compile(r"^document (d[0-9a-f]{10}) \| (.+) \| page (\d+) of (\d+)$")
_MODULE_IN = re.compile(r"(?:^|\s)module: (\S+)")
_BUDGET = re.compile(r"You have (\d+) actions\.")
TOOL_RESULT = "Tool result:"  # memgpt's summary request shows a tool result as a user message with this head


def _search_query(arguments: str) -> str | None:
    try:
        args = json.loads(arguments)
    except json.JSONDecodeError:
        return None
    query = args.get("query") if isinstance(args, dict) else None
    return query.strip() if isinstance(query, str) else None


class CorpusMind(Mind):
    def __init__(self, profile: Any, seed: int):
        super().__init__(profile, seed)
        self._verdicts: dict[tuple[Any, ...], bool] = {}  # reads(): pure, asked again at every step
        self._module_lines: dict[tuple[Any, ...], str | None] = {}

    # --- reading ---------------------------------------------------------------------------
    def _parse(self, reader: ContextReader, message: dict[str, Any], offset: int, step: int) -> None:
        role, facts, state = message.get("role"), reader.facts, reader.state
        content = str(message.get("content") or "")
        if role == "system":  # only memory notes (memgpt's core blocks) are read from it
            self._read_notes(content.splitlines(), offset, step)
            return
        if role == "assistant":
            for call in message.get("tool_calls") or []:
                name = call.get("function", {}).get("name")
                state["memory_reply"] = name in MEMORY_TOOLS  # the next tool message is a memory's reply
                if name in MEMORY_TOOLS:
                    state["memory_turns"] = state.get("memory_turns", 0) + 1
                else:
                    state["last_call"] = call.get("function", {})
            return
        if role == "user" and "clues" not in state:
            clues = [(m.group(1), parse_clue(m.group(2))) for line in content.splitlines()
                     if (m := CLUE_LINE.match(line))]
            state["clues"] = {cid: clue for cid, clue in clues if clue}
            state["release"] = content.startswith("Find the one release")
            parts = parts_of(content)
            if len(parts) > 1:  # a long question: a name per part (parts.py), answered by the last action
                state["parts"] = parts
                state["budget"] = int(m.group(1)) if (m := _BUDGET.search(content)) else None
            for cid in state["clues"]:
                facts.add(CLUE, offset, step, cid)
            return
        if role == "user" and content.startswith(TOOL_RESULT):  # a tool result in memgpt's summary request
            self._read_result(content[len(TOOL_RESULT):].lstrip("\n").splitlines(), offset, step)
            return
        if role == "user":  # a memory's message: earlier results it shows again (ACG's quoted
            # evidence, the store's retrieved items, a summary's quotations) are read as the results
            # they quote; its notes (a summary's) as notes
            shown = [*quoted_blocks(content), *(item for _, who, item in retrieved_items(content) if who == "tool")]
            for block in shown:
                self._read_result(block.splitlines(), offset, step, quoted=True)
            for line in content.splitlines():  # ACG names the call each quote came from: a search was run
                if (m := ACG_EVIDENCE.match(line)) and m.group(4).startswith("search "):
                    query = _search_query(m.group(4).removeprefix("search "))
                    if query:
                        facts.add(QUERY, offset, step, query)
            self._read_notes(content.splitlines(), offset, step)
            for header in (CONDENSED, EVICTED):  # its turns the memory took out of the context (about half)
                if found := header.search(content):
                    state["earlier_turns"] = max(state.get("earlier_turns", 0), int(found.group(1)) // 2)
            return
        if role == "tool" and state.get("memory_reply"):  # archival passages (notes), quoted messages
            self._read_notes(content.splitlines(), offset, step)
            for block in quoted_blocks(content):
                self._read_result(block.splitlines(), offset, step, quoted=True)
            return
        if role == "tool":
            self._read_result(content.splitlines(), offset, step)

    def _read_notes(self, lines: list[str], offset: int, step: int) -> None:
        """Memory notes (``guidance.note_facts``): a read note's queries were run; a pending note's
        units are candidates still in play, each with the document that made it one."""
        facts, state = self.reader.facts, self.reader.state
        for line in lines:
            for kind, key, _ in note_facts(line):
                if kind == "page":
                    facts.add(QUERY, offset, step, key)
                elif kind == "pending" and (m := NOTED_ITEM.match(key)):
                    state.setdefault("noted", {})[m.group(1)] = (m.group(2), m.group(3))
                    facts.add(NOTED, offset, step, m.group(1))

    def _read_result(self, lines: list[str], offset: int, step: int, quoted: bool = False) -> None:
        """A search's hits or a document's page (from the tool, or quoted by a memory: a quoted hit
        may come without its search line)."""
        facts, state = self.reader.facts, self.reader.state
        docs: dict[str, dict[str, Any]] = state.setdefault("docs", {})
        if lines and (m := _DOC.match(lines[0])):
            entry = docs.setdefault(m.group(1), {"title": m.group(2), "snippet": ""})
            pages = entry.setdefault("pages", {})
            if not quoted or int(m.group(3)) not in pages:  # a quote may show part of a page read in full
                pages[int(m.group(3))] = "\n".join(lines[1:])
            entry["n_pages"] = int(m.group(4))
            facts.add(DOC, offset, step, m.group(1))
        query = None
        for i, line in enumerate(lines):
            if m := _SEARCH.match(line):
                query = m.group(1)
                facts.add(QUERY, offset, step, query)
            elif (m := _HIT.match(line)) and (query is not None or quoted):
                snippet = lines[i + 1].strip() if i + 1 < len(lines) else ""
                entry = docs.setdefault(m.group(2), {"title": m.group(3), "snippet": snippet})
                if query is not None and query not in entry.setdefault("queries", []):
                    entry["queries"].append(query)  # the searches that showed it (a long question's parts)
                facts.add(HIT, offset, step, m.group(2), int(m.group(1)))
            elif not quoted and line.strip() == REPEATED and \
                    stable_uniform(self.seed, "follow", step) < self.profile.follow_guidance:
                self._repeated(state.get("last_call") or {}, offset, step)

    def _repeated(self, call: dict[str, Any], offset: int, step: int) -> None:
        """A controller refused an exact repeat: the call counts as done (its result is above)."""
        try:
            args = json.loads(call.get("arguments") or "{}")
        except (json.JSONDecodeError, TypeError):
            return
        if not isinstance(args, dict):
            return
        if call.get("name") == "search" and isinstance(args.get("query"), str):
            self.reader.facts.add(QUERY, offset, step, args["query"].strip())
        elif call.get("name") == "get_document" and args.get("doc_id") in self.reader.state.get("docs", {}):
            if self.reader.state["docs"][args["doc_id"]].get("pages"):
                self.reader.facts.add(DOC, offset, step, args["doc_id"])

    # --- beliefs -----------------------------------------------------------------------------
    def _recalled(self, step: int) -> dict[int, list[str]]:
        facts = self.reader.facts
        mask = recalled_mask(self.profile, facts.array("offset"), self.reader.total_tokens, self.seed, step)
        kind, key = facts.array("kind"), facts.array("key")
        out: dict[int, list[str]] = {k: [] for k in (CLUE, QUERY, HIT, DOC, NOTED, ORDER)}
        for i in np.flatnonzero(mask):
            if int(kind[i]) in out:
                out[int(kind[i])].append(facts.names[int(key[i])])
            if int(kind[i]) in (HIT, NOTED):  # hits and noted candidates' documents, as they sit
                out[ORDER].append(("n" if int(kind[i]) == NOTED else "h") + facts.names[int(key[i])])
        return {k: list(dict.fromkeys(v)) for k, v in out.items()}

    def reads(self, clue: Clue, doc_id: str, candidate: str) -> bool:
        """The noisy reader's verdict on an opened document (fixed per clue, document and candidate);
        kept for the pages it was given, as a plan asks it of the same documents at every step."""
        entry = self.reader.state["docs"][doc_id]
        pages = entry.get("pages", {})
        shown = tuple(pages[p] for p in sorted(pages))
        key = (clue, doc_id, candidate, entry["title"], shown)
        verdict = self._verdicts.get(key)
        if verdict is None:
            truth = supports(clue, entry["title"], "\n".join(shown), candidate)
            draw = stable_uniform(self.seed, "read", clue.kind, clue.a, clue.b, doc_id, candidate)
            verdict = self._verdicts[key] = draw >= self.profile.false_negative if truth \
                else draw < self.profile.false_positive
        return verdict

    def module_line(self, doc_id: str) -> str | None:
        """The module a docstring document's ``module:`` line names (its pages read, else its snippet)."""
        entry = self.reader.state["docs"][doc_id]
        shown = (tuple(entry.get("pages", {}).values()), entry["snippet"])
        if (found := self._module_lines.get((doc_id, shown), "")) == "":
            match = _MODULE_IN.search(" ".join(shown[0]) or shown[1])
            found = self._module_lines[(doc_id, shown)] = match.group(1) if match else None
        return found

    # --- deciding --------------------------------------------------------------------------
    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Turn:
        self.reader.update(messages, tools)
        state = self.reader.state
        step = self.reader.assistant_turns - state.get("memory_turns", 0)
        clues: dict[str, Clue] = state.get("clues") or {}
        if not clues:
            return Turn(text_message("I cannot tell what the question asks for."), None)
        seen = self._recalled(step)
        known = {cid: clues[cid] for cid in seen[CLUE]}
        if state.get("parts"):
            return self._act_parts(clues, seen, step)
        plan = Plan(self, known, Recalled(state, seen), step)
        memory = offered(tools)
        if memory and (due := due_memory_call(self.seed, self.profile.follow_guidance, plan, seen[QUERY],
                                              messages, step)):
            return due
        action = plan.next_action()
        call_id = f"call_{step}"
        if action is None:
            best = plan.best_candidate()
            if best is None:
                return Turn(text_message("I could not find an object that fits the clues."), None)
            return self._answer(best, plan, clues, call_id)
        if action[0] == "answer":
            return self._answer(action[1], plan, clues, call_id)
        if memory and (search := archive_first(self.seed, self.profile.follow_guidance, plan, action, messages, step)):
            return search
        name, args = action
        return turn_from_message(tool_call_message(name, args, call_id))

    def _act_parts(self, clues: dict[str, Clue], seen: dict[int, list[str]], step: int) -> Turn:
        spent = step + self.reader.state.get("earlier_turns", 0)  # a summary's header says how many went before
        recalled = Recalled(self.reader.state, seen)
        action = solve_parts(self, clues, set(seen[CLUE]), spent,
                             lambda known, module: Plan(self, known, recalled, step, module=module, part=True))
        if action[0] == "answer":
            args = {"text": action[1], "confidence": action[2]}
        else:
            args = action[1]
        return turn_from_message(tool_call_message(action[0], args, f"call_{step}"))

    def memory_notes(self) -> list[str]:
        """Its notes of what it recalls now (``notes.notes``): what a summary it writes starts with."""
        state = self.reader.state
        clues: dict[str, Clue] = state.get("clues") or {}
        if not clues or state.get("parts"):  # a long question's notes would need to be per part: none yet
            return []
        step = self.reader.assistant_turns - state.get("memory_turns", 0)
        seen = self._recalled(step)
        return notes(Plan(self, {cid: clues[cid] for cid in seen[CLUE]}, Recalled(state, seen), step), seen[QUERY])

    def _answer(self, candidate: str, plan: "Plan", clues: dict[str, Clue], call_id: str) -> Turn:
        met = sum(1 for clue in clues.values() if plan.met(clue, candidate))
        confidence = round(0.3 + 0.7 * met / len(clues), 2) if self.profile.false_negative else 1.0
        return turn_from_message(tool_call_message("answer", {"text": candidate, "confidence": confidence}, call_id))
