"""One step's beliefs of the corpus mind (``mind.py``) and the next action they call for.

The mind builds a ``Plan`` every step from the facts it recalls; nothing of it outlives the step.
Whether a document could show a clue for a candidate depends on its title alone (``title_keys``:
what the title offers; ``fit_key``: what a clue asks for a candidate), so a step's hits and opened
documents are indexed by those keys once (``Recalled``, shared by the step's plans), and each
(clue, candidate) is one lookup there.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any, cast

from pushbench.tasks.corpus.reader import (CHANGELOG_TITLE, DOCS_TITLE, DOCSTRING_TITLE, HEAD_KINDS, MODULE_TITLE,
                                           RELEASE_KINDS, Clue, base_title, clue_query, release_of, year_of)

if TYPE_CHECKING:
    from pushbench.tasks.corpus.mind import CorpusMind

CLUE, QUERY, HIT, DOC, NOTED = range(5)  # the mind's fact kinds; NOTED: a candidate's document a memory note names
ORDER = -1  # the mind's key of the recalled hits and noted documents in context order
Key = tuple[str, ...]
MODULE_KEY: Key = ("module",)


@lru_cache(maxsize=1 << 16)  # pure, and asked of the same few hundred titles at every step
def title_keys(title: str) -> frozenset[Key]:
    """What a document with this title could show a clue about (the keys ``fit_key`` gives)."""
    title = base_title(title)
    keys: set[Key] = set()
    if m := DOCSTRING_TITLE.match(title):
        keys.add(("docstring", m.group(1)))
    if (release := release_of(title)) is not None:
        keys.add(("release", release))
    if MODULE_TITLE.match(title):
        keys.add(MODULE_KEY)
    if m := CHANGELOG_TITLE.match(title):
        keys.add(("changelog", m.group(1), m.group(3)))
    if m := DOCS_TITLE.match(title):
        keys.add(("page", m.group(1), m.group(2)))
    return frozenset(keys)


def fit_key(clue: Clue, candidate: str) -> Key:
    """The title key of a document that could show ``clue`` for ``candidate`` (what is worth opening)."""
    if clue.kind in ("terms", "param"):
        return ("docstring", candidate)
    if clue.kind in RELEASE_KINDS:
        return ("release", candidate)
    if clue.kind == "module":
        return MODULE_KEY
    if clue.kind == "changelog":
        return ("changelog", clue.a, clue.b)
    return ("page", clue.a, clue.b)


@lru_cache(maxsize=1 << 16)
def docstring_name(title: str) -> str | None:
    """The function, class or method a docstring document's title names."""
    m = DOCSTRING_TITLE.match(base_title(title))
    return m.group(1) if m else None


class Recalled:
    """The documents one step recalls, shared by every plan of the step (a long question has one per
    part): hits and noted documents in context order, the opened ones, each indexed by title key."""

    def __init__(self, state: dict[str, Any], seen: dict[int, list[str]]):
        self.docs: dict[str, dict[str, Any]] = state.get("docs", {})
        self.queries = set(seen[QUERY])
        noted = state.get("noted", {})
        self.noted: dict[str, tuple[str, str | None]] = {  # doc -> (candidate, year): known from a note only
            d: noted[d] for d in seen[NOTED] if d not in self.docs}
        hit = set(seen[HIT])  # a noted document also recalled as a hit sits where the hit does
        known = self.docs.keys() | self.noted.keys()
        self.order = list(dict.fromkeys(d[1:] for d in seen[ORDER] if (d[0] == "h" and d[1:] in self.docs)
                                        or (d[0] == "n" and d[1:] not in hit and d[1:] in known)))
        self.hits = [d for d in self.order if d in self.docs]
        self.opened = {d for d in seen[DOC] if d in self.docs}
        self.hits_by_key = self._index(self.hits)
        self.opened_by_key = self._index(sorted(self.opened))

    def _index(self, docs: list[str]) -> dict[Key, list[str]]:
        """The documents (in ``docs``' order) under each key their titles offer."""
        index: dict[Key, list[str]] = {}
        for doc_id in docs:
            for key in title_keys(self.docs[doc_id]["title"]):
                index.setdefault(key, []).append(doc_id)
        return index


class Plan:
    """One step's beliefs and the next action they call for."""

    def __init__(self, mind: CorpusMind, clues: dict[str, Clue], recalled: Recalled, step: int,
                 module: str | None = None, part: bool = False):
        """``module``: the module an earlier part's answer gave (a ``module_of`` clue); ``part``: one
        part of a long question, whose candidates are the hits of its own head clues' searches."""
        self.mind, self.clues, self.step, self.part = mind, clues, step, part
        self.ids = {clue: cid for cid, clue in clues.items()}  # calls name the clue they work on
        self.docs, self.queries, self.noted = recalled.docs, recalled.queries, recalled.noted
        self.order, self.hits, self.opened = recalled.order, recalled.hits, recalled.opened
        self._hits_by_key, self._opened_by_key = recalled.hits_by_key, recalled.opened_by_key
        self._modules: dict[str, str | None] = {}
        self.module = module or self._module()

    def _module(self) -> str | None:
        clue = next((c for c in self.clues.values() if c.kind == "module"), None)
        if clue is None:
            return None
        for doc_id in self._opened_by_key.get(MODULE_KEY, ()):
            m = MODULE_TITLE.match(base_title(self.docs[doc_id]["title"]))
            if m and self.mind.reads(clue, doc_id, m.group(1)):
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
                title = self.docs[doc_id]["title"]
                name = release_of(base_title(title)) if release else docstring_name(title)
            if name and name not in names:
                names.append(name)
        return names

    def head_docs(self, candidate: str) -> list[str]:
        """Documents that made ``candidate`` one (a head clue's hits naming it), seen or noted."""
        keys = {fit_key(c, candidate) for c in self.clues.values() if c.kind in HEAD_KINDS}
        chosen = {d for key in keys for d in self._hits_by_key.get(key, ())}
        seen = [d for d in self.hits if d in chosen]
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
        key = ("release", candidate)
        first = next(iter(self._hits_by_key.get(key, ()) or self._opened_by_key.get(key, ())), None)
        if first is not None:
            return year_of(self.docs[first]["title"])
        return next((year for name, year in self.noted.values() if name == candidate and year), None)

    def candidate_module(self, candidate: str) -> str | None:
        """The module named by the first document (hits, then opened) of the candidate's docstring
        that shows a ``module:`` line; fixed for the plan's step."""
        if candidate not in self._modules:
            key = ("docstring", candidate)
            docs = [*self._hits_by_key.get(key, ()), *self._opened_by_key.get(key, ())]
            self._modules[candidate] = next((m for d in docs if (m := self.mind.module_line(d))), None)
        return self._modules[candidate]

    def met(self, clue: Clue, candidate: str) -> bool:
        if clue.kind in ("module", "module_of"):
            return self.module is not None and self.candidate_module(candidate) == self.module
        reads = self.mind.reads
        return any(reads(clue, d, candidate) for d in self._opened_by_key.get(fit_key(clue, candidate), ()))

    def check(self, clue: Clue, candidate: str) -> tuple[str, Any] | None | bool:
        """The next action to settle ``clue`` for ``candidate``; True if met, False if ruled out."""
        if self.met(clue, candidate):
            return True
        if clue.kind in ("module", "module_of"):
            return False if self.module else None
        anchor = self.candidate_year(candidate) if clue.kind in RELEASE_KINDS else self.module
        query = clue_query(clue, candidate, anchor)
        fitting = list(self._hits_by_key.get(fit_key(clue, candidate), ()))
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
            unopened = [d for d in self._hits_by_key.get(MODULE_KEY, ()) if d not in self.opened]
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
