"""Deterministic ranked code search over a snapshot's code units (BM25, paginated).

Like a real code search a query returns a finite ranked list (``max_results`` hits, shown
``page_size`` at a time); each hit is an identifier with a snippet: decorators and signature, the
first docstring line, and the body lines that best match the query. The index holds only the
snapshot's code units.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
from collections import Counter
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from typing import TYPE_CHECKING

import numpy as np

from pushbench import config
from pushbench.tasks.reposcan import codeindex
from pushbench.tasks.reposcan.codeindex import CodeUnit, load_units, tokenize

if TYPE_CHECKING:
    from scipy import sparse

BM25_K1 = 1.2  # standard BM25 term-frequency saturation
BM25_B = 0.75  # standard BM25 length normalisation
MAX_LINE = 110  # snippet lines are cut here so a page stays readable
MATCH_LINES = 3  # body lines shown per hit


@dataclass(frozen=True)
class Hit:
    rank: int  # 1-based position in the full result list
    uid: str
    snippet: list[tuple[int, str]]


@dataclass(frozen=True)
class Page:
    query: str
    page: int
    pages: int
    total: int
    hits: list[Hit]


class CodeSearch:
    """BM25 over ``units`` (``search_for``'s units carry no AST node: ``codeindex.load_units`` has them)."""

    def __init__(self, units: tuple[CodeUnit, ...], max_results: int = 50, page_size: int = 10):
        self.units = units
        self.max_results = max_results
        self.page_size = page_size
        self._by_uid = {u.uid: u for u in units}
        self._vocab: dict[str, int] = {}
        self._weights = self._build([Counter(tokenize(u.text())) for u in units])

    def _build(self, counts: list[Counter]) -> sparse.csr_matrix:
        from scipy import sparse  # here: the scoring and other stages that only read the family skip its import (0.45 s)

        rows, cols, tfs = [], [], []
        for doc, counter in enumerate(counts):
            for term, count in counter.items():
                rows.append(self._vocab.setdefault(term, len(self._vocab)))
                cols.append(doc)
                tfs.append(count)
        tf = np.asarray(tfs, dtype=np.float64)
        lengths = np.array([sum(c.values()) for c in counts], dtype=np.float64)
        norm = BM25_K1 * (1 - BM25_B + BM25_B * lengths / max(lengths.mean(), 1.0))
        cols_arr = np.asarray(cols)
        df = np.bincount(np.asarray(rows), minlength=len(self._vocab)).astype(np.float64)
        idf = np.log1p((len(counts) - df + 0.5) / (df + 0.5))
        rows_arr = np.asarray(rows)
        weight = idf[rows_arr] * tf * (BM25_K1 + 1) / (tf + norm[cols_arr])
        return sparse.csr_matrix((weight, (rows_arr, cols_arr)), shape=(len(self._vocab), len(counts)))

    def unit(self, uid: str) -> CodeUnit | None:
        return self._by_uid.get(uid)

    @lru_cache(maxsize=4096)
    def ranked(self, query: str) -> tuple[int, ...]:
        """Indices of the units the query returns, best first (ties by identifier)."""
        terms = sorted({self._vocab[t] for t in tokenize(query) if t in self._vocab})
        if not terms:
            return ()
        scores = np.asarray(self._weights[terms].sum(axis=0)).ravel()
        hits = np.flatnonzero(scores > 0)
        order = sorted(hits.tolist(), key=lambda i: (-round(float(scores[i]), 9), self.units[i].uid))
        return tuple(order[: self.max_results])

    @lru_cache(maxsize=8192)
    def page(self, query: str, page: int) -> Page:
        ranked = self.ranked(query)
        pages = max(1, -(-len(ranked) // self.page_size))
        start = (page - 1) * self.page_size
        chosen = ranked[start:start + self.page_size]
        q_tokens = set(tokenize(query))
        hits = [Hit(start + k + 1, self.units[i].uid, snippet(self.units[i], q_tokens, query))
                for k, i in enumerate(chosen)]
        return Page(query, page, pages, len(ranked), hits)


def snippet(unit: CodeUnit, q_tokens: set[str], raw_query: str) -> list[tuple[int, str]]:
    """Signature, first docstring line, and the body lines that match the query best."""
    lines = list(unit.header)
    if unit.doc:
        indent = unit.header[-1][1][: len(unit.header[-1][1]) - len(unit.header[-1][1].lstrip())]
        lines.append((unit.doc_line, f'{indent}    """{unit.doc}'))
    phrase = raw_query.strip().lower()

    def score(item: tuple[int, str]) -> tuple[int, int, int]:
        text = item[1].lower()
        matched = len(q_tokens & set(tokenize(item[1])))
        return (-(matched + (2 if phrase and phrase in text else 0)), item[0], 0)

    matching = [line for line in unit.body if q_tokens & set(tokenize(line[1]))]
    shown = sorted(sorted(matching, key=score)[:MATCH_LINES]) or unit.body[:2]
    return [(n, t[:MAX_LINE]) for n, t in lines + shown]


@lru_cache(maxsize=8)
def search_for(root: Path, max_results: int, page_size: int) -> CodeSearch:
    """One shared index per snapshot tree and layout: built once per process, or loaded from the
    disk cache (``data/tmp/reposcan-search``), keyed by the bytes of every ``.py`` file of the tree
    and of the index's own code, so each stage after the first loads it instead of parsing the tree."""
    key = _index_key(Path(root), max_results, page_size)
    cached = config.DATA / "tmp" / "reposcan-search" / f"{key}.pickle"
    try:
        search = pickle.loads(cached.read_bytes())  # only this code writes there
        if isinstance(search, CodeSearch):
            return search
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, TypeError, ValueError):
        pass
    units = tuple(replace(u, node=None) for u in load_units(Path(root)))  # a search never reads the AST
    search = CodeSearch(units, max_results, page_size)
    cached.parent.mkdir(parents=True, exist_ok=True)
    tmp = cached.with_name(f".{cached.name}.{os.getpid()}.tmp")
    tmp.write_bytes(pickle.dumps(search, protocol=pickle.HIGHEST_PROTOCOL))
    os.replace(tmp, cached)
    return search


def _index_key(root: Path, max_results: int, page_size: int) -> str:
    """The files ``load_units`` reads, with their bytes, and the code that turns them into an index."""
    digest = hashlib.sha256(json.dumps([max_results, page_size]).encode())
    for module in (Path(__file__), Path(codeindex.__file__)):
        digest.update(hashlib.sha256(module.read_bytes()).digest())
    for path in sorted(root.rglob("*.py")):
        if path.is_symlink() or not path.is_file():
            continue
        digest.update(path.relative_to(root).as_posix().encode("utf-8", "surrogateescape") + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:40]
