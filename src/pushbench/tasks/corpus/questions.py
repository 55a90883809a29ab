"""BrowseComp-style questions over the corpus: one API object (function, class or method) named by
2-4 clues, each from a different document, proven unique.

For every clue the generator computes the set of entities it fits, with the reader's own rules
(``reader.supports``) over every document of the corpus. A question is kept only when

- every single clue fits between ``min_clue_matches`` and ``max_clue_matches`` entities (weak alone),
- the clues together fit exactly one entity, the answer (uniqueness), over the whole corpus: a
  changelog or page clue fits every entity its text names, of any project (the clue says whose
  changelog or page shows it, not that the answer is of that project; the evidence is the answer's
  own project's),
- no clue text names the answer (its last name component, as a word, or its dotted name),
- each clue's evidence document is among the top hits of the search ``reader.clue_query`` forms for
  it (so a careful reader can find it: the sim/perfect feasibility check).

Hard negatives are the entities that fit every clue but one, with the clue they miss.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from pushbench.tasks.corpus.build import Document
from pushbench.tasks.corpus.index import CorpusIndex
from pushbench.tasks.corpus.reader import (CHANGELOG_TITLE, DOCS_TITLE, Clue, base_title, clue_query, named,
                                           quote_of, short_name, supports, words)

STOP = frozenset("this that with from have will when which their there been into also only then than "
                 "they them used uses using what were would should could more most other some such "
                 "each does done must same like just make made instead return returns returned value "
                 "values given none true false default defaults self args kwargs param type rtype module".split())
SKIP_PARAMS = frozenset({"self", "cls", "args", "kwargs"})
ANCHOR_KINDS = ("module", "changelog", "page")


@dataclass
class Entity:
    name: str  # the canonical answer: the dotted name its docstring document's title shows
    project: str
    module: str
    params: list[str]
    docs: list[Document] = field(default_factory=list)  # its docstring documents

    @property
    def short(self) -> str:
        return short_name(self.name)


@dataclass
class Option:
    clue: Clue
    fits: frozenset[str]  # entity names the clue fits
    evidence: str  # the answer's evidence document for it


class Catalogue:
    """Entities and, per clue value, the entities it fits (computed once from the corpus)."""

    def __init__(self, docs: list[Document]):
        self.entities: dict[str, Entity] = {}
        self.term_docs: dict[str, set[str]] = defaultdict(set)  # word -> docstring documents using it
        self.doc_entity: dict[str, str] = {}
        self.doc_words: dict[str, set[str]] = {}
        self.modules: dict[str, Document] = {}
        self.by_module: dict[str, set[str]] = defaultdict(set)
        self.by_param: dict[str, set[str]] = defaultdict(set)
        self.short: dict[str, set[str]] = defaultdict(set)  # last name component -> entities, any project
        self.changelog: dict[tuple[str, str], dict[str, list[Document]]] = defaultdict(lambda: defaultdict(list))
        self.pages: dict[tuple[str, str], dict[str, list[Document]]] = defaultdict(lambda: defaultdict(list))
        for d in docs:
            self._add(d)

    def _add(self, d: Document) -> None:
        if d.kind == "docstring":
            name = d.meta["name"]
            e = self.entities.setdefault(name, Entity(name, d.project, d.meta["module"],
                                                      [p.strip("*") for p in d.meta["params"].split(", ") if p]))
            if any(x.id == d.id for x in e.docs):
                return
            e.docs.append(d)
            self.doc_words[d.id] = words(d.text)
            self.doc_entity[d.id] = name
            for w in self.doc_words[d.id]:
                self.term_docs[w].add(d.id)
            self.by_module[e.module].add(name)
            for p in e.params:
                self.by_param[p].add(name)
            self.short[e.short].add(name)
        elif d.kind == "module":
            self.modules.setdefault(d.meta["module"], d)
        elif d.kind == "changelog" and (m := CHANGELOG_TITLE.match(base_title(d.title))):
            for ident in named(d.text):
                self.changelog[(d.project, m.group(3))][ident].append(d)
        elif d.kind == "docs" and (m := DOCS_TITLE.match(base_title(d.title))):
            for ident in named(d.text):
                self.pages[(d.project, m.group(2))][ident].append(d)

    def fitting(self, idents: set[str]) -> frozenset[str]:
        """Every entity a text naming ``idents`` in code names, whatever its project: a clue says
        which project's changelog or page shows it, never that the answer is of that project."""
        return frozenset(n for i in idents for n in self.short.get(i, ()))

    def options(self, e: Entity, rng: random.Random) -> dict[str, list[Option]]:
        out: dict[str, list[Option]] = defaultdict(list)
        for d in e.docs:
            ws = sorted(w for w in self.doc_words[d.id] if w not in STOP and w not in e.name.lower())
            pairs = [(a, b) for i, a in enumerate(ws) for b in ws[i + 1:]]
            rng.shuffle(pairs)
            for a, b in pairs[:60]:
                fits = frozenset(self.doc_entity[i] for i in self.term_docs[a] & self.term_docs[b])
                out["terms"].append(Option(Clue("terms", a, b), fits, d.id))
        for p in e.params:
            if p not in SKIP_PARAMS and len(p) > 2:
                out["param"].append(Option(Clue("param", p), frozenset(self.by_param[p]), e.docs[0].id))
        if (mod := self.modules.get(e.module)) is not None:
            out["module"].append(Option(Clue("module", quote_of(mod.text)), frozenset(self.by_module[e.module]), mod.id))
        for (project, year), idents in sorted(self.changelog.items()):
            if project == e.project and e.short in idents:
                fits = self.fitting(set(idents))
                out["changelog"].append(Option(Clue("changelog", project, year), fits, idents[e.short][0].id))
        for (project, page), idents in sorted(self.pages.items()):
            if project == e.project and e.short in idents:
                fits = self.fitting(set(idents))
                out["page"].append(Option(Clue("page", project, page), fits, idents[e.short][0].id))
        return out


def names_answer(text: str, e: Entity) -> bool:
    """Does ``text`` name the answer (its last component as a word, or its dotted name)?"""
    low = text.lower()
    return e.name.lower() in low or re.search(rf"(?<![\w]){re.escape(e.short.lower())}(?![\w])", low) is not None


def findable(index: CorpusIndex, option: Option, e: Entity, anchors: dict[str, str], k: int) -> bool:
    """Is a document supporting the clue for ``e`` among the top ``k`` hits of its clue query?"""
    target = e.module if option.clue.kind == "module" else e.name
    hits = index.search(clue_query(option.clue, e.name, anchors.get("module")), k)
    return any(supports(option.clue, h.doc.title, h.doc.text, target) for h in hits)


@dataclass
class Question:
    entity: Entity
    clues: list[Option]
    negatives: list[dict[str, str]]


def compose(cat: Catalogue, index: CorpusIndex, e: Entity, n_clues: int, params: dict[str, Any],
            rng: random.Random) -> Question | None:
    lo, hi, k = int(params["min_clue_matches"]), int(params["max_clue_matches"]), int(params["top_k"])
    opts = cat.options(e, rng)
    weak = {kind: [o for o in opts[kind] if lo <= len(o.fits) <= hi and e.name in o.fits
                   and not names_answer(o.clue.text(), e)] for kind in opts}
    anchors = [kind for kind in ANCHOR_KINDS if weak.get(kind)]
    if len(anchors) < n_clues - 1 or not (weak.get("terms") or weak.get("param")):
        return None
    kinds = sorted(rng.sample(anchors, n_clues - 1))
    chosen = [rng.choice(weak[kind]) for kind in kinds]
    module = {"module": e.module} if "module" in kinds else {}
    if not all(findable(index, o, e, module, k) for o in chosen):
        return None
    used = {o.evidence for o in chosen}
    heads = [o for o in weak.get("terms", []) + weak.get("param", []) if o.evidence not in used]
    rng.shuffle(heads)
    rest = frozenset.intersection(*(o.fits for o in chosen))
    for head in heads[:40]:
        if rest & head.fits == {e.name} and findable(index, head, e, module, k):
            clues = [head, *chosen]
            return Question(e, clues, hard_negatives(clues, e, int(params["hard_negatives"])))
    return None


def hard_negatives(clues: list[Option], e: Entity, limit: int) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for i, miss in enumerate(clues):
        others = [o.fits for j, o in enumerate(clues) if j != i]
        for name in sorted(frozenset.intersection(*others) - {e.name}) if others else []:
            out.append({"entity": name, "misses": f"clue:{i + 1}"})
    return sorted(out, key=lambda x: (x["misses"], x["entity"]))[:limit]


def generate(docs: list[Document], index: CorpusIndex, params: dict[str, Any], seed: int,
             boilerplate: str = "", release_boilerplate: str = "") -> list[Question]:
    """API questions, then release questions, in a fixed order; the boilerplates are the questions'
    fixed wording, which must not name an answer either."""
    cat = Catalogue(docs)
    rng = random.Random(seed)
    names = sorted(n for n in cat.entities if not names_answer(boilerplate, cat.entities[n]))
    rng.shuffle(names)
    counts = sorted((int(c) for c in params["clue_counts"]), reverse=True)
    questions = _fill(names, counts, int(params["questions"]) // len(counts),
                      lambda name, n: compose(cat, index, cat.entities[name], n, params,
                                              random.Random(f"{seed}:{name}:{n}")))
    from pushbench.tasks.corpus.releases import ReleaseCatalogue, compose_release, names_release

    rel = ReleaseCatalogue(docs, STOP)
    releases = sorted(n for n in rel.releases if not names_release(release_boilerplate, rel.releases[n]))
    rng.shuffle(releases)

    def release_question(name: str, n: int) -> Question | None:
        made = compose_release(rel, index, rel.releases[name], n, params, random.Random(f"{seed}:{name}:{n}"))
        return Question(rel.releases[name], made[0], made[1]) if made else None  # type: ignore[arg-type]

    return questions + _fill(releases, counts, int(params["release_questions"]) // len(counts), release_question)


def _fill(names: list[str], counts: list[int], per_count: int, make: Any) -> list[Question]:
    """Up to ``per_count`` questions per clue count, the most demanding count first (fewer entities
    have enough usable clues for it); an entity answers at most one question."""
    questions: list[Question] = []
    used: set[str] = set()
    for n in counts:
        made = 0
        for name in names:
            if made >= per_count:
                break
            if name not in used and (q := make(name, n)):
                questions.append(q)
                used.add(name)
                made += 1
    return questions
