"""Contextual retrieval (seed §3.3, App. B.1): ranked lists interleaved into seeds, then expansion.

Ranking is hashed TF-IDF cosine (``memory.retrieval.HashingEmbedder`` vectors reweighted by the
index's own document frequencies at query time, as ``memory.retrieval.VectorIndex`` ranks), done
with two matrix-vector products per query so it stays fast at thousands of units. Ties go to the
newer unit. The task-ranked and the event-ranked lists are interleaved (task first) into
``SEEDS`` unique seeds; each seed then brings its one-hop graph neighbours (strongest edge first)
and up to ``CLUSTER_LIMIT`` members of its local cluster (the structural-entropy module, nearest
first by weight to the seed, then newest). The depth is fixed; nothing here attributes a unit to a
requirement.
"""

from __future__ import annotations

import numpy as np

from pushbench.memory.acg.entropy import Clusters
from pushbench.memory.acg.graph import UnitGraph
from pushbench.memory.retrieval import HashingEmbedder

SEEDS = 8
NEIGHBOUR_LIMIT = 4  # one-hop neighbours per seed
CLUSTER_LIMIT = 4  # local-cluster members per seed


class TfIdfIndex:
    """Unit vectors (raw hashed counts, log-scaled) ranked by TF-IDF cosine for a query."""

    def __init__(self, embedder: HashingEmbedder):
        self.embedder = embedder
        dims = embedder.dims
        self.tf = np.zeros((256, dims), dtype=np.float32)
        self.sq = np.zeros((256, dims), dtype=np.float32)
        self.df = np.zeros(dims, dtype=np.float32)
        self.size = 0
        self._norms: tuple[int, np.ndarray, np.ndarray] | None = None  # (size, idf, row norms) of the last query
        self._queries: dict[str, np.ndarray] = {}  # log-scaled query term weights, by text

    def add(self, counts: np.ndarray) -> np.ndarray:
        """Add a unit by its raw hashed counts; returns its L2-normalised log-tf vector (the graph's)."""
        if self.size == len(self.tf):
            self.tf = np.concatenate([self.tf, np.zeros_like(self.tf)])
            self.sq = np.concatenate([self.sq, np.zeros_like(self.sq)])
        tf = log_tf(counts)
        self.tf[self.size], self.sq[self.size] = tf, tf * tf
        self.df += tf > 0
        self.size += 1
        norm = float(np.linalg.norm(tf))
        return tf / norm if norm > 0 else tf

    def _weights(self) -> tuple[np.ndarray, np.ndarray]:
        """IDF and every row's IDF-weighted norm, recomputed only when units were added."""
        n = self.size
        if self._norms is None or self._norms[0] != n:
            idf = (np.log((1.0 + n) / (1.0 + self.df)) + 1.0).astype(np.float32)
            norms = np.sqrt(self.sq[:n] @ (idf * idf))
            norms[norms == 0] = 1.0
            self._norms = (n, idf, norms)
        return self._norms[1], self._norms[2]

    def _query(self, text: str) -> np.ndarray:
        q = self._queries.get(text)
        if q is None:
            if len(self._queries) > 64:
                self._queries.clear()
            q = self._queries[text] = log_tf(self.embedder.counts(text))
        return q

    def scores(self, query: str | np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """Cosine scores of the query (a text, or raw hashed counts) against every unit (or the units ``rows``)."""
        if not self.size:
            return np.zeros(0, dtype=np.float32)
        idf, norms = self._weights()
        q = (self._query(query) if isinstance(query, str) else log_tf(query)) * idf
        qn = float(np.linalg.norm(q))
        tf = self.tf[: self.size] if rows is None else self.tf[rows]
        if qn == 0:
            return np.zeros(len(tf), dtype=np.float32)
        return (tf @ (q * idf / qn)) / (norms if rows is None else norms[rows])


def log_tf(counts: np.ndarray) -> np.ndarray:
    return np.where(counts > 0, 1.0 + np.log(np.maximum(counts, 1.0)), 0.0).astype(np.float32)


def ranked(scores: np.ndarray, allowed: np.ndarray, limit: int) -> list[int]:
    """Top ``limit`` allowed units with a positive score; ties newest first."""
    idx = np.flatnonzero(allowed & (scores > 1e-6))
    if not len(idx):
        return []
    order = idx[np.lexsort((-idx, -scores[idx]))]
    return [int(i) for i in order[:limit]]


def interleave(lists: list[list[int]], limit: int = SEEDS) -> list[int]:
    out: list[int] = []
    for k in range(max((len(x) for x in lists), default=0)):
        for x in lists:
            if k < len(x) and x[k] not in out:
                out.append(x[k])
                if len(out) == limit:
                    return out
    return out


def expand(seeds: list[int], graph: UnitGraph, clusters: Clusters, eligible: np.ndarray | None = None) -> list[int]:
    """Seeds, then per seed its strongest one-hop neighbours and nearest cluster members (unique);
    ``eligible``: a mask of the units it may add (all when None)."""
    out = list(seeds)
    chosen = set(out)

    def take(items: list[int], limit: int) -> None:
        n = 0
        for i in items:
            if n == limit:
                return
            if i not in chosen and (eligible is None or eligible[i]):
                chosen.add(i)
                out.append(i)
                n += 1

    for s in seeds:
        near = graph.neighbours(s)
        take(sorted(near, key=lambda j: (-near[j], -j)), NEIGHBOUR_LIMIT)
        take(_by_weight(s, clusters.members(s), near), CLUSTER_LIMIT)
    return out


def _by_weight(seed: int, members: list[int], near: dict[int, float]) -> list[int]:
    """``members`` but ``seed``, strongest edge to it first, ties newest first: the order of
    ``sorted(key=(-weight, -id))``, with the unlinked majority (weight 0) sorted without a key."""
    linked = [j for j in members if j != seed and near.get(j, 0.0) != 0.0]
    order = sorted(linked, key=lambda j: (-near[j], -j))
    unlinked = sorted((j for j in members if j != seed and near.get(j, 0.0) == 0.0), reverse=True)
    split = next((k for k, j in enumerate(order) if near[j] < 0), len(order))
    return order[:split] + unlinked + order[split:]
