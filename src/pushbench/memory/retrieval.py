"""Offline text embeddings and a small vector index for the memory baselines.

Embeddings are hashed term-frequency vectors: words (``\\w+``, lower-cased) are hashed into a fixed
number of dimensions with MurmurHash3 (x86, 32-bit, seed 0, unsigned: the hash scikit-learn's
``HashingVectorizer`` uses, from the ``mmh3`` package: scikit-learn's own takes 1.8 s to import),
weighted ``1 + log(tf)`` and L2-normalised. No vocabulary is fitted, so a vector never changes
once computed (a store can keep it) and nothing is downloaded. ``HashingVectorizer.transform``
itself costs ~0.6 ms per call on one short text, too slow for per-step use, so the tokenising
and hashing are done here with a per-word cache; the vectors are the same kind.

``VectorIndex`` keeps the rows in a growing float32 matrix and ranks by cosine similarity with
inverse-document-frequency weights computed from the index's own document counts at query time
(hashed TF-IDF), so common words such as ``test`` or ``page`` do not dominate a search.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import mmh3
import numpy as np

WORD = re.compile(r"\w+")
DEFAULT_DIMS = 1024
_SLOTS: dict[int, dict[str, int]] = {}  # dims -> word -> slot, shared by every embedder of a process


class HashingEmbedder:
    """Text -> L2-normalised hashed term-frequency vector of ``dims`` float32 values."""

    def __init__(self, dims: int = DEFAULT_DIMS, cache_size: int = 4096):
        if dims < 8:
            raise ValueError(f"dims must be at least 8, got {dims}")
        self.dims = dims
        self._slots = _SLOTS.setdefault(dims, {})  # a pure function of (word, dims): safe to share
        self._vectors: dict[str, np.ndarray] = {}
        self._cache_size = cache_size

    def _slot(self, word: str) -> int:
        slot = self._slots.get(word)
        if slot is None:
            slot = self._slots[word] = mmh3.hash(word, 0, signed=False) % self.dims
        return slot

    def counts(self, text: str) -> np.ndarray:
        """Raw hashed word counts (float32)."""
        words = WORD.findall(text.lower())
        if not words:
            return np.zeros(self.dims, dtype=np.float32)
        slot = self._slot
        return np.bincount([slot(w) for w in words], minlength=self.dims).astype(np.float32)

    def embed(self, text: str) -> np.ndarray:
        cached = self._vectors.get(text)
        if cached is not None:
            return cached
        vec = self.counts(text)
        nz = vec > 0
        vec[nz] = 1.0 + np.log(vec[nz])
        norm = float(np.linalg.norm(vec))
        if norm > 0:
            vec /= norm
        if len(self._vectors) >= self._cache_size:
            self._vectors.clear()
        self._vectors[text] = vec
        return vec

    def embed_documents(self, texts: list[str]) -> list[np.ndarray]:
        return [self.embed(t) for t in texts]

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed(text)


@dataclass(frozen=True)
class Hit:
    index: int  # position of the document in insertion order
    score: float


class VectorIndex:
    """Append-only documents ranked by hashed TF-IDF cosine similarity."""

    def __init__(self, embedder: HashingEmbedder | None = None, capacity: int = 256):
        self.embedder = embedder or HashingEmbedder()
        self._rows = np.zeros((capacity, self.embedder.dims), dtype=np.float32)
        self._df = np.zeros(self.embedder.dims, dtype=np.float32)
        self.size = 0

    def __len__(self) -> int:
        return self.size

    def add(self, text: str) -> int:
        if self.size == len(self._rows):
            self._rows = np.concatenate([self._rows, np.zeros_like(self._rows)])
        vec = self.embedder.embed(text)
        self._rows[self.size] = vec
        self._df += vec > 0
        self.size += 1
        return self.size - 1

    def search(self, query: str, limit: int = 5, offset: int = 0) -> tuple[list[Hit], int]:
        """Ranked hits ``[offset, offset + limit)`` with a positive score, and how many there are."""
        if limit < 1 or offset < 0:
            raise ValueError("limit must be >= 1 and offset >= 0")
        if not self.size:
            return [], 0
        idf = np.log((1.0 + self.size) / (1.0 + self._df)) + 1.0
        q = self.embedder.counts(query)
        q = np.where(q > 0, 1.0 + np.log(np.maximum(q, 1.0)), 0.0).astype(np.float32) * idf
        qn = float(np.linalg.norm(q))
        if qn == 0:
            return [], 0
        rows = self._rows[: self.size] * idf
        norms = np.linalg.norm(rows, axis=1)
        norms[norms == 0] = 1.0
        scores = rows @ (q / qn) / norms
        matching = np.flatnonzero(scores > 1e-6)
        # Stable order: by score, ties by insertion order (newest first, as memories usually are).
        order = matching[np.lexsort((-matching, -scores[matching]))]
        page = order[offset: offset + limit]
        return [Hit(int(i), round(float(scores[i]), 4)) for i in page], len(order)


def pages(total: int, page_size: int) -> int:
    return max(1, math.ceil(total / page_size))
