"""The unit graph: mutual-nearest-neighbour semantic edges and source-affinity edges."""

from __future__ import annotations

import numpy as np
import pytest

from pushbench.memory.acg.graph import MIN_SIMILARITY, UnitGraph


def unit_vectors(rnd: np.random.Generator, n: int, dims: int) -> np.ndarray:
    v = np.abs(rnd.normal(size=(n, dims))).astype(np.float32) * (rnd.random((n, dims)) < 0.3)
    v[:, 0] += 0.01
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def brute_mutual(rows: np.ndarray) -> set[tuple[int, int]]:
    sims = rows @ rows.T
    np.fill_diagonal(sims, -1.0)
    best = []
    for i in range(len(rows)):
        j = int(np.argmax(sims[i]))  # ties: the older unit, as the graph breaks them
        best.append(j if sims[i, j] >= MIN_SIMILARITY else -1)
    return {(i, j) for i, j in enumerate(best) if j > i and best[j] == i}


def test_semantic_edges_are_the_mutual_nearest_neighbour_pairs_after_every_arrival() -> None:
    rnd = np.random.default_rng(3)
    for trial in range(5):
        rows = unit_vectors(rnd, 60, 32)
        graph = UnitGraph(32)
        weights: dict[tuple[int, int], float] = {}
        for k, v in enumerate(rows):
            for i, j, dw in graph.add_unit(v):
                weights[(i, j)] = weights.get((i, j), 0.0) + dw
            expected = brute_mutual(rows[: k + 1])
            assert graph.semantic_pairs() == expected
            assert {p for p, w in weights.items() if abs(w) > 1e-9} == expected
            assert all(abs(w - 1.0) < 1e-9 for w in weights.values() if abs(w) > 1e-9)


def test_source_affinity_is_one_over_n_minus_one_and_identical_groups_count_once() -> None:
    graph = UnitGraph(8)
    for _ in range(5):
        graph.add_unit(np.eye(8, dtype=np.float32)[_])  # orthogonal: no semantic edges
    deltas = graph.add_source([0, 1, 2, 3])
    assert len(deltas) == 6 and all(dw == pytest.approx(1 / 3) for *_, dw in deltas)
    assert sum(graph.neighbours(0).values()) == pytest.approx(1.0)  # each unit's affinity totals 1
    assert graph.add_source([3, 2, 1, 0]) == []  # the same member group again (a page read twice)
    assert graph.add_source([4]) == []  # a single unit has no partner
    graph.add_source([2, 3])
    assert graph.weight(2, 3) == pytest.approx(1 / 3 + 1.0)  # a different group: weights add


def test_semantic_and_source_weights_add() -> None:
    graph = UnitGraph(4)
    a = np.array([1, 0, 0, 0], dtype=np.float32)
    b = np.array([0.9, 0.1, 0, 0], dtype=np.float32)
    graph.add_unit(a)
    graph.add_unit(b / np.linalg.norm(b))
    graph.add_source([0, 1])
    assert graph.weight(0, 1) == pytest.approx(2.0)
