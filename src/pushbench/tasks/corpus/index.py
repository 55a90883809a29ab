"""BM25 over the corpus documents (``bm25s``), built once per process and corpus file.

The index holds each document's title and text and nothing else: no answer, clue or entity
metadata. Ties in score break by corpus order, so a query always gives the same ranking.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

import bm25s
import numpy as np

from pushbench.tasks.corpus.build import Document

_TOKEN = re.compile(r"(?u)\b\w\w+\b")


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens (identifiers split at dots and underscores kept whole)."""
    return _TOKEN.findall(text.lower())


@dataclass
class Hit:
    doc: Document
    score: float


class CorpusIndex:
    def __init__(self, docs: list[Document]):
        start = time.perf_counter()
        self.docs = docs
        self.by_id = {d.id: d for d in docs}
        corpus_tokens = [tokens(f"{d.title}\n{d.text}") for d in docs]
        self.retriever = bm25s.BM25()
        self.retriever.index(corpus_tokens, show_progress=False)
        self.vocab = set(self.retriever.vocab_dict)
        self.build_seconds = time.perf_counter() - start

    def search(self, query: str, k: int) -> list[Hit]:
        terms = [t for t in tokens(query) if t in self.vocab]
        if not terms:
            return []
        scores = self.retriever.get_scores(terms)
        positive = np.flatnonzero(scores > 0)
        order = positive[np.lexsort((positive, -scores[positive]))][:k]
        return [Hit(self.docs[int(i)], float(scores[int(i)])) for i in order]


_CACHE: dict[tuple[str, int], CorpusIndex] = {}


def index_for(path: Path, docs: list[Document]) -> CorpusIndex:
    """One index per corpus file (keyed by path and size) and process."""
    key = (str(path), path.stat().st_size if path.is_file() else len(docs))
    if key not in _CACHE:
        _CACHE.clear()
        _CACHE[key] = CorpusIndex(docs)
    return _CACHE[key]
