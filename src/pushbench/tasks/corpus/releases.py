"""Release questions: one release (``project version``) named by 2-4 clues about its changelog
items, each clue from a different item, proven unique the same way as the API questions
(``questions.py``): every clue alone fits between ``min_clue_matches`` and ``max_clue_matches``
releases, all together fit only the answer, no clue names it, and each evidence item is among the
top hits of the search ``reader.clue_query`` forms for it.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from dataclasses import dataclass
from itertools import islice
from typing import Any

from pushbench.tasks.corpus.build import Document
from pushbench.tasks.corpus.index import CorpusIndex
from pushbench.tasks.corpus.reader import Clue, clue_query, named, release_of, supports, words, year_of


LINK_WORDS = frozenset({"https", "http", "github", "issues", "issue", "pull", "user", "html",
                        "readthedocs"})  # link words: no clue in them (nor in the projects' own names)


@dataclass(frozen=True)
class Release:
    name: str  # the canonical answer, "project version"
    project: str
    year: str

    @property
    def short(self) -> str:
        return self.name.split(" ", 1)[1]


@dataclass
class ReleaseOption:
    clue: Clue
    fits: frozenset[str]
    evidence: str


class ReleaseCatalogue:
    def __init__(self, docs: list[Document], stop: frozenset[str]):
        self.stop = stop
        self.items: dict[str, list[Document]] = defaultdict(list)
        self.releases: dict[str, Release] = {}
        self.term_docs: dict[str, set[str]] = defaultdict(set)
        self.named_docs: dict[str, set[str]] = defaultdict(set)
        self.doc_release: dict[str, str] = {}
        self.doc_words: dict[str, set[str]] = {}
        self.link_words = LINK_WORDS | {w for d in docs for w in words(d.project)}
        for d in docs:
            release = release_of(d.title) if d.kind == "changelog" else None
            if release is None:
                continue
            self.releases.setdefault(release, Release(release, d.project, year_of(d.title) or ""))
            self.items[release].append(d)
            self.doc_release[d.id] = release
            self.doc_words[d.id] = words(d.text)
            for w in self.doc_words[d.id]:
                self.term_docs[w].add(d.id)
            for ident in named(d.text):
                self.named_docs[ident].add(d.id)

    def options(self, r: Release, rng: random.Random) -> list[ReleaseOption]:
        out = []
        for d in self.items[r.name]:
            ws = sorted(w for w in self.doc_words[d.id] if w not in self.stop and w not in self.link_words)
            pairs = [(a, b) for i, a in enumerate(ws) for b in ws[i + 1:]]
            rng.shuffle(pairs)
            for a, b in pairs[:30]:
                fits = frozenset(self.doc_release[i] for i in self.term_docs[a] & self.term_docs[b])
                out.append(ReleaseOption(Clue("item_terms", a, b), fits, d.id))
            for ident in sorted(named(d.text)):
                if len(ident) >= 4 and not ident.isdigit():
                    fits = frozenset(self.doc_release[i] for i in self.named_docs[ident])
                    out.append(ReleaseOption(Clue("item_names", ident), fits, d.id))
        return out


def names_release(text: str, r: Release) -> bool:
    low = text.lower()
    return r.name.lower() in low or re.search(rf"(?<![\w.]){re.escape(r.short.lower())}(?![\w])", low) is not None


def findable(index: CorpusIndex, option: ReleaseOption, r: Release, head: bool, k: int) -> bool:
    query = clue_query(option.clue) if head else clue_query(option.clue, r.name, r.year)
    return any(supports(option.clue, h.doc.title, h.doc.text, r.name) for h in index.search(query, k))


def compose_release(cat: ReleaseCatalogue, index: CorpusIndex, r: Release, n_clues: int,
                    params: dict[str, Any], rng: random.Random) -> tuple[list[ReleaseOption], list[dict[str, str]]] | None:
    lo, hi, k = int(params["min_clue_matches"]), int(params["max_clue_matches"]), int(params["top_k"])
    if len(cat.items[r.name]) < n_clues:
        return None
    weak = [o for o in cat.options(r, rng) if lo <= len(o.fits) <= hi and not names_release(o.clue.text(), r)]
    rng.shuffle(weak)
    heads = list(islice((o for o in weak if findable(index, o, r, True, k)), 3))  # findable is pure: the first 3
    found: dict[int, bool] = {}  # findable with the name, per option (asked again under every head)
    for head in heads:
        chosen, fits = [head], set(head.fits)
        for o in weak:
            if len(chosen) == n_clues:
                break
            if o.evidence in {c.evidence for c in chosen} or not (fits - o.fits):
                continue  # another item, and it must rule some release out
            if len(chosen) == n_clues - 1 and fits & o.fits != {r.name}:
                continue
            if id(o) not in found:
                found[id(o)] = findable(index, o, r, False, k)
            if found[id(o)]:
                chosen.append(o)
                fits &= o.fits
        if len(chosen) == n_clues and fits == {r.name}:
            return chosen, negatives(chosen, r, int(params["hard_negatives"]))
    return None


def negatives(clues: list[ReleaseOption], r: Release, limit: int) -> list[dict[str, str]]:
    out = []
    for i in range(len(clues)):
        others = [o.fits for j, o in enumerate(clues) if j != i]
        out += [{"entity": n, "misses": f"clue:{i + 1}"} for n in sorted(frozenset.intersection(*others) - {r.name})]
    return sorted(out, key=lambda x: (x["misses"], x["entity"]))[:limit]
