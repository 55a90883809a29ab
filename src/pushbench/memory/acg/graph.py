"""The unit graph: mutual-nearest-neighbour semantic edges plus source-affinity edges (seed App. B.2).

- Semantic: each unit's nearest neighbour is the most similar other unit (cosine of hashed
  term-frequency vectors, ``retrieval.HashingEmbedder``; at least ``MIN_SIMILARITY``; ties go to the
  older unit). A pair that are each other's nearest neighbour gets weight 1. When a new unit
  becomes some unit's nearest neighbour, that unit's old mutual pair (if any) is dropped, so the
  semantic edges always equal the mutual pairs of the units so far.
- Source affinity: the n ≥ 2 units one observation event showed each get 1/(n−1) with each other
  (each unit's affinity totals 1). An event whose member set equals an earlier event's (the same
  page read twice) adds nothing: identical source-member groups count once.

The weights add. Every change is reported as an edge delta ``(i, j, dw)`` for the clustering.
Plain cosine (no IDF) is used here so a pair's similarity never changes once both exist.
"""

from __future__ import annotations

import numpy as np

MIN_SIMILARITY = 0.2  # below this a unit has no nearest neighbour
EdgeDelta = tuple[int, int, float]


class UnitGraph:
    def __init__(self, dims: int):
        self.dims = dims
        self.rows = np.zeros((256, dims), dtype=np.float32)
        self.size = 0
        self.best = np.full(256, -1, dtype=np.int64)  # nearest neighbour per unit (-1: none)
        self.best_score = np.zeros(256, dtype=np.float32)
        self.mate: list[int] = []  # mutual partner per unit (-1: none)
        self.groups: set[frozenset[int]] = set()
        self.adj: list[dict[int, float]] = []

    def _grow(self) -> None:
        self.rows = np.concatenate([self.rows, np.zeros_like(self.rows)])
        self.best = np.concatenate([self.best, np.full_like(self.best, -1)])
        self.best_score = np.concatenate([self.best_score, np.zeros_like(self.best_score)])

    def neighbours(self, i: int) -> dict[int, float]:
        return self.adj[i]

    def weight(self, i: int, j: int) -> float:
        return self.adj[i].get(j, 0.0)

    def _change(self, i: int, j: int, dw: float, out: list[EdgeDelta]) -> None:
        for a, b in ((i, j), (j, i)):
            w = self.adj[a].get(b, 0.0) + dw
            if abs(w) < 1e-9:
                self.adj[a].pop(b, None)
            else:
                self.adj[a][b] = w
        out.append((i, j, dw))

    def add_unit(self, vector: np.ndarray) -> list[EdgeDelta]:
        """Add one unit (its L2-normalised vector); returns the semantic edge changes."""
        if self.size == len(self.rows):
            self._grow()
        u = self.size
        sims = self.rows[:u] @ vector if u else np.zeros(0, dtype=np.float32)
        self.rows[u] = vector
        self.size += 1
        self.adj.append({})
        self.mate.append(-1)
        affected = {u}
        if u:
            j = int(np.argmax(sims))
            if sims[j] >= MIN_SIMILARITY:
                self.best[u], self.best_score[u] = j, sims[j]
            better = np.flatnonzero((sims >= MIN_SIMILARITY) & (sims > self.best_score[:u] + 1e-6))
            for i in better.tolist():
                affected.add(i)
                if self.best[i] >= 0:
                    affected.add(int(self.best[i]))
                self.best[i], self.best_score[i] = u, sims[i]
            if self.best[u] >= 0:
                affected.add(int(self.best[u]))
        partner = {}
        for a in affected:
            b = int(self.best[a])
            partner[a] = b if b >= 0 and int(self.best[b]) == a else -1
        gone = {(min(a, m), max(a, m)) for a in affected if (m := self.mate[a]) >= 0 and partner[a] != m}
        made = {(min(a, p), max(a, p)) for a, p in partner.items() if p >= 0 and self.mate[a] != p}
        out: list[EdgeDelta] = []
        for a, b in sorted(gone):
            self.mate[a] = self.mate[b] = -1
            self._change(a, b, -1.0, out)
        for a, b in sorted(made):
            self.mate[a], self.mate[b] = b, a
            self._change(a, b, 1.0, out)
        return out

    def add_source(self, members: list[int]) -> list[EdgeDelta]:
        """Source-affinity edges among the units one event showed (once per distinct member set)."""
        group = frozenset(members)
        out: list[EdgeDelta] = []
        if len(group) < 2 or group in self.groups:
            return out
        self.groups.add(group)
        ordered = sorted(group)
        w = 1.0 / (len(ordered) - 1)
        for k, i in enumerate(ordered):
            for j in ordered[k + 1:]:
                self._change(i, j, w, out)
        return out

    def semantic_pairs(self) -> set[tuple[int, int]]:
        return {(a, b) for a, b in enumerate(self.mate) if b > a}
