"""Two-level structural entropy: ΔH of a merge, the greedy against exhaustive search, the incremental rule."""

from __future__ import annotations

import math
import random

import pytest

from pushbench.memory.acg.entropy import Clusters, delta_h, greedy, h2

WEIGHTS = (1.0, 0.5, 1 / 3, 0.25, 1.5, 2.0)


def random_graph(rnd: random.Random, n: int, p: float) -> dict[tuple[int, int], float]:
    return {(i, j): rnd.choice(WEIGHTS) for i in range(n) for j in range(i + 1, n) if rnd.random() < p}


def partitions(items: list[int]):
    """Every set partition of ``items`` (Bell(8) = 4,140 for eight nodes)."""
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for smaller in partitions(rest):
        for k in range(len(smaller)):
            yield smaller[:k] + [[first, *smaller[k]]] + smaller[k + 1:]
        yield [[first], *smaller]


def stats(edges: dict[tuple[int, int], float], members: list[int], module: dict[int, int]) -> tuple[float, float]:
    """(volume, weight leaving) of the module holding ``members``."""
    inside = set(members)
    volume = sum(w for (i, j), w in edges.items() for x in (i, j) if x in inside)
    leaving = sum(w for (i, j), w in edges.items() if (i in inside) != (j in inside))
    return volume, leaving


def best_merge(edges: dict[tuple[int, int], float], partition: list[list[int]]) -> float:
    """The lowest ΔH of merging two modules of the partition, by direct recomputation of H²."""
    base = h2(edges, partition)
    best = math.inf
    for a in range(len(partition)):
        for b in range(a + 1, len(partition)):
            merged = [m for k, m in enumerate(partition) if k not in (a, b)] + [partition[a] + partition[b]]
            best = min(best, h2(edges, merged) - base)
    return best


def test_delta_h_of_a_merge_equals_direct_recomputation() -> None:
    rnd = random.Random(7)
    checked = 0
    for _ in range(300):
        n = rnd.randint(3, 12)
        edges = random_graph(rnd, n, rnd.uniform(0.2, 0.8))
        if not edges:
            continue
        nodes = list(range(n))
        rnd.shuffle(nodes)
        cuts = sorted(rnd.sample(range(1, n), rnd.randint(1, n - 1)))
        partition = [nodes[a:b] for a, b in zip([0, *cuts], [*cuts, n])]
        degree = {i: 0.0 for i in range(n)}
        for (i, j), w in edges.items():
            degree[i] += w
            degree[j] += w
        two_m = sum(degree.values())
        x, y = rnd.sample(range(len(partition)), 2)
        vx, gx = stats(edges, partition[x], {})
        vy, gy = stats(edges, partition[y], {})
        if vx == 0 or vy == 0:
            continue
        c = sum(w for (i, j), w in edges.items()
                if (i in partition[x] and j in partition[y]) or (i in partition[y] and j in partition[x]))
        merged = [m for k, m in enumerate(partition) if k not in (x, y)] + [partition[x] + partition[y]]
        direct = h2(edges, merged) - h2(edges, partition)
        assert delta_h(vx, gx, vy, gy, c, two_m) == pytest.approx(direct, abs=1e-9)
        checked += 1
    assert checked > 200


def test_h2_of_known_graphs() -> None:
    # Two disjoint edges, each pair a module: no weight leaves, each node has half its module's volume.
    edges = {(0, 1): 1.0, (2, 3): 1.0}
    assert h2(edges, [[0, 1], [2, 3]]) == pytest.approx(1.0)
    assert h2(edges, [[0], [1], [2], [3]]) == pytest.approx(2.0)  # one-level entropy of a 4-regular split
    assert greedy(4, edges).partition() == [[0, 1], [2, 3]]


def test_greedy_ends_at_a_local_optimum_and_is_close_to_exhaustive_search() -> None:
    """On 240 random graphs of 2-8 nodes the greedy leaves no merge with ΔH < 0; it reaches the exhaustive
    optimum on most of them (at least 80% here) and its gap to the optimum stays below 0.25 bit
    (measured with this seed: see the printed figures)."""
    rnd = random.Random(2016)
    graphs = optimal = 0
    worst = 0.0
    for _ in range(240):
        n = rnd.randint(2, 8)
        edges = random_graph(rnd, n, rnd.uniform(0.25, 0.75))
        if not edges:
            continue
        graphs += 1
        found = greedy(n, edges).partition()
        assert best_merge(edges, found) >= -1e-9  # no merge of negative ΔH is left
        h_found = h2(edges, found)
        h_best = min(h2(edges, p) for p in partitions(list(range(n))))
        assert h_found >= h_best - 1e-9
        gap = h_found - h_best
        optimal += gap < 1e-9
        worst = max(worst, gap)
    print(f"greedy reached the optimum on {optimal}/{graphs} graphs; largest gap {worst:.4f} bit")
    assert graphs >= 200
    assert optimal >= 0.8 * graphs
    assert worst < 0.25


def check_bookkeeping(clusters: Clusters, edges: dict[tuple[int, int], float]) -> None:
    """Volumes, weight leaving and cuts kept incrementally equal a recomputation from the edges."""
    module = {i: k for k, m in clusters.modules.items() for i in m.members}
    assert sorted(module) == list(range(len(clusters.module_of)))
    for k, m in clusters.modules.items():
        volume, leaving = stats(edges, m.members, module)
        assert m.volume == pytest.approx(volume, abs=1e-6)
        assert m.leaving == pytest.approx(leaving, abs=1e-6)
        for other, c in m.cut.items():
            direct = sum(w for (i, j), w in edges.items() if {module[i], module[j]} == {k, other})
            assert c == pytest.approx(direct, abs=1e-6)


def test_incremental_clustering_stays_a_greedy_local_optimum() -> None:
    """Nodes arrive with edges, some edges later lose weight (a mutual pair that ends); after every
    settle no merge lowers H² (checked by recomputation) and the bookkeeping equals the graph."""
    rnd = random.Random(5)
    for trial in range(25):
        clusters = Clusters()
        edges: dict[tuple[int, int], float] = {}
        for node in range(rnd.randint(8, 30)):
            clusters.add_node()
            for other in rnd.sample(range(node), min(node, rnd.randint(0, 3))):
                w = rnd.choice(WEIGHTS)
                edges[(other, node)] = edges.get((other, node), 0.0) + w
                clusters.change_edge(other, node, w)
            if edges and rnd.random() < 0.3:  # an edge loses weight 1 or all of it
                pair = rnd.choice(sorted(edges))
                dw = -min(edges[pair], 1.0)
                edges[pair] += dw
                if abs(edges[pair]) < 1e-9:
                    del edges[pair]
                clusters.change_edge(*pair, dw)
            clusters.settle()
            if edges:
                partition = clusters.partition()
                assert best_merge(edges, partition) >= -1e-9, f"trial {trial}: a favourable merge was left"
        check_bookkeeping(clusters, edges)


def test_the_batch_greedy_is_deterministic_and_a_local_optimum() -> None:
    rnd = random.Random(11)
    for _ in range(50):
        n = rnd.randint(2, 9)
        edges = random_graph(rnd, n, 0.5)
        batch = greedy(n, edges)
        again = greedy(n, dict(reversed(list(edges.items()))))  # the order edges arrive in does not matter
        assert batch.partition() == again.partition()
        if edges:
            assert best_merge(edges, batch.partition()) >= -1e-9
