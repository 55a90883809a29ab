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
from functools import lru_cache
from typing import Any, cast

import numpy as np

from pushbench.guidance import (ACG_EVIDENCE, CONDENSED, EVICTED, REPEATED, note_facts, quoted_blocks,
                                retrieved_items)
from pushbench.policies.base import Turn, text_message, tool_call_message, turn_from_message
from pushbench.policies.sim.attention import recalled_mask, stable_uniform
from pushbench.policies.sim.memory import ContextReader, Mind
from pushbench.policies.sim.memory_skills import MEMORY_TOOLS, offered
from pushbench.tasks.corpus.notes import NOTED_ITEM, archive_first, due_memory_call, notes
from pushbench.tasks.corpus.parts import parts_of, solve_parts
from pushbench.tasks.corpus.reader import (CHANGELOG_TITLE, CLUE_LINE, DOCS_TITLE, DOCSTRING_TITLE, HEAD_KINDS,
                                           MODULE_TITLE, RELEASE_KINDS, Clue, base_title, clue_query, parse_clue,
                                           release_of, supports, year_of)

CLUE, QUERY, HIT, DOC, NOTED = range(5)  # NOTED: a candidate's document named by a memory note
ORDER = -1  # _recalled's key of the recalled hits and noted documents in context order
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

    def _reads(self, clue: Clue, doc_id: str, candidate: str) -> bool:
        """The noisy reader's verdict on an opened document (fixed per clue, document and candidate)."""
        entry = self.reader.state["docs"][doc_id]
        text = "\n".join(entry.get("pages", {}).get(p, "") for p in sorted(entry.get("pages", {})))
        truth = supports(clue, entry["title"], text, candidate)
        draw = stable_uniform(self.seed, "read", clue.kind, clue.a, clue.b, doc_id, candidate)
        return draw >= self.profile.false_negative if truth else draw < self.profile.false_positive

    @staticmethod
    @lru_cache(maxsize=1 << 16)  # pure, and asked of every hit for every clue and candidate at each step
    def _fits_title(clue: Clue, title: str, candidate: str) -> bool:
        """Could a document with this title show the clue for the candidate? (what is worth opening)"""
        title = base_title(title)
        if clue.kind in ("terms", "param"):
            return bool((m := DOCSTRING_TITLE.match(title)) and m.group(1) == candidate)
        if clue.kind in RELEASE_KINDS:
            return release_of(title) == candidate
        if clue.kind == "module":
            return bool(MODULE_TITLE.match(title))
        if clue.kind == "changelog":
            return bool((m := CHANGELOG_TITLE.match(title)) and (m.group(1), m.group(3)) == (clue.a, clue.b))
        return bool((m := DOCS_TITLE.match(title)) and (m.group(1), m.group(2)) == (clue.a, clue.b))

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
        plan = Plan(self, known, seen, step)
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
        action = solve_parts(self, clues, set(seen[CLUE]), spent,
                             lambda known, module: Plan(self, known, seen, step, module=module, part=True))
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
        return notes(Plan(self, {cid: clues[cid] for cid in seen[CLUE]}, seen, step), seen[QUERY])

    def _answer(self, candidate: str, plan: "Plan", clues: dict[str, Clue], call_id: str) -> Turn:
        met = sum(1 for clue in clues.values() if plan.met(clue, candidate))
        confidence = round(0.3 + 0.7 * met / len(clues), 2) if self.profile.false_negative else 1.0
        return turn_from_message(tool_call_message("answer", {"text": candidate, "confidence": confidence}, call_id))


class Plan:
    """One step's beliefs and the next action they call for."""

    def __init__(self, mind: CorpusMind, clues: dict[str, Clue], seen: dict[int, list[str]], step: int,
                 module: str | None = None, part: bool = False):
        """``module``: the module an earlier part's answer gave (a ``module_of`` clue); ``part``: one
        part of a long question, whose candidates are the hits of its own head clues' searches."""
        self.mind, self.clues, self.step, self.part = mind, clues, step, part
        self.ids = {clue: cid for cid, clue in clues.items()}  # calls name the clue they work on
        self.docs = mind.reader.state.get("docs", {})
        self.queries = set(seen[QUERY])
        noted = mind.reader.state.get("noted", {})
        self.noted: dict[str, tuple[str, str | None]] = {  # doc -> (candidate, year): known from a note only
            d: noted[d] for d in seen[NOTED] if d not in self.docs}
        hit = set(seen[HIT])  # a noted document also recalled as a hit sits where the hit does
        self.order = list(dict.fromkeys(d[1:] for d in seen[ORDER] if (d[0] == "h" and d[1:] in self.docs)
                                        or (d[0] == "n" and d[1:] not in hit and d[1:] in self.docs.keys() | self.noted.keys())))
        self.hits = [d for d in self.order if d in self.docs]
        self.opened = {d for d in seen[DOC] if d in self.docs}
        self._modules: dict[str, str] | None = None
        self.module = module or self._module()

    def _module(self) -> str | None:
        clue = next((c for c in self.clues.values() if c.kind == "module"), None)
        if clue is None:
            return None
        for doc_id in sorted(self.opened):
            m = MODULE_TITLE.match(base_title(self.docs[doc_id]["title"]))
            if m and self.mind._reads(clue, doc_id, m.group(1)):
                return m.group(1)
        return None

    def _search(self, query: str, clue: Clue) -> tuple[str, dict[str, Any]] | None:
        return None if query in self.queries else ("search", {"query": query, "requirement": self.ids[clue]})

    def _open(self, doc_id: str, clue: Clue) -> tuple[str, dict[str, Any]]:
        return "get_document", {"doc_id": doc_id, "requirement": self.ids[clue]}

    def candidates(self) -> list[str]:
        names: list[str] = []
        release = self.mind.reader.state.get("release")
        heads = {clue_query(c, None, self.module) for c in self.clues.values() if c.kind in HEAD_KINDS}
        for doc_id in self.order:
            if self.part and not heads & set(self.docs.get(doc_id, {}).get("queries", ())):
                continue  # shown by another part's search
            if doc_id in self.noted:
                name: str | None = self.noted[doc_id][0]
            else:
                title = base_title(self.docs[doc_id]["title"])
                m = DOCSTRING_TITLE.match(title)
                name = release_of(title) if release else (m.group(1) if m else None)
            if name and name not in names:
                names.append(name)
        return names

    def head_docs(self, candidate: str) -> list[str]:
        """Documents that made ``candidate`` one (a head clue's hits naming it), seen or noted."""
        seen = [d for d in self.hits if any(self.mind._fits_title(c, self.docs[d]["title"], candidate)
                                            for c in self.clues.values() if c.kind in HEAD_KINDS)]
        return seen + [d for d, (name, _) in self.noted.items() if name == candidate]

    def open_candidates(self) -> list[tuple[str, str, str | None]]:
        """(candidate, a document of it, its year) for each candidate no recalled clue rules out."""
        out = []
        for candidate in self.candidates():
            docs = self.head_docs(candidate)
            if docs and not any(self.check(clue, candidate) is False for clue in self._order()):
                out.append((candidate, docs[0], self.candidate_year(candidate)))
        return out

    def candidate_year(self, candidate: str) -> str | None:
        return next((year_of(self.docs[d]["title"]) for d in self.hits + sorted(self.opened)
                     if release_of(self.docs[d]["title"]) == candidate),
                    next((year for name, year in self.noted.values() if name == candidate and year), None))

    def candidate_module(self, candidate: str) -> str | None:
        """The module named by the first document (hits, then opened) of the candidate's docstring
        that shows a ``module:`` line; one pass over a plan's documents, fixed for its step."""
        if self._modules is None:
            self._modules = {}
            for doc_id in self.hits + sorted(self.opened):
                entry = self.docs[doc_id]
                m = DOCSTRING_TITLE.match(base_title(entry["title"]))
                if m and m.group(1) not in self._modules:
                    found = _MODULE_IN.search(" ".join(entry.get("pages", {}).values()) or entry["snippet"])
                    if found:
                        self._modules[m.group(1)] = found.group(1)
        return self._modules.get(candidate)

    def met(self, clue: Clue, candidate: str) -> bool:
        if clue.kind in ("module", "module_of"):
            return self.module is not None and self.candidate_module(candidate) == self.module
        return any(self.mind._reads(clue, d, candidate) for d in sorted(self.opened)
                   if self.mind._fits_title(clue, self.docs[d]["title"], candidate))

    def check(self, clue: Clue, candidate: str) -> tuple[str, Any] | None | bool:
        """The next action to settle ``clue`` for ``candidate``; True if met, False if ruled out."""
        if self.met(clue, candidate):
            return True
        if clue.kind in ("module", "module_of"):
            return False if self.module else None
        anchor = self.candidate_year(candidate) if clue.kind in RELEASE_KINDS else self.module
        query = clue_query(clue, candidate, anchor)
        fitting = [d for d in self.hits if self.mind._fits_title(clue, self.docs[d]["title"], candidate)]
        if clue.kind in HEAD_KINDS:  # a noted document of the candidate is one its head clue's search showed
            fitting += [d for d, (name, _) in self.noted.items() if name == candidate]
        unopened = [d for d in fitting if d not in self.opened]
        if unopened:
            return self._open(unopened[0], clue)
        if query not in self.queries:
            return self._search(query, clue)
        return False

    def next_action(self) -> tuple[str, Any] | None:
        module_clue = next((c for c in self.clues.values() if c.kind == "module"), None)
        if module_clue is not None and self.module is None:
            unopened = [d for d in self.hits if MODULE_TITLE.match(base_title(self.docs[d]["title"]))
                        and d not in self.opened]
            if unopened:
                return self._open(unopened[0], module_clue)
            if (search := self._search(clue_query(module_clue), module_clue)) is not None:
                return search
        heads = [c for c in self.clues.values() if c.kind in HEAD_KINDS]
        for head in heads:
            if (search := self._search(clue_query(head, None, self.module), head)) is not None:
                return search
        for candidate in self.candidates():
            results = [self.check(clue, candidate) for clue in self._order()]
            if all(r is True for r in results):
                return "answer", candidate
            if any(r is False for r in results):
                continue
            return cast("tuple[str, Any] | None", next(r for r in results if r is not True))  # no False left
        return None

    def _order(self) -> list[Clue]:
        """Cheap checks first: the candidate's own document, its module, then searched clues."""
        rank = {"terms": 0, "param": 0, "item_terms": 0, "item_names": 0, "module": 1, "module_of": 1, "changelog": 2,
                "page": 3}
        return sorted(self.clues.values(), key=lambda c: rank[c.kind])

    def best_candidate(self) -> str | None:
        scored = [(sum(self.met(c, n) for c in self.clues.values()), -i, n) for i, n in enumerate(self.candidates())]
        return max(scored)[2] if scored and max(scored)[0] > 0 else None
