"""Two-level structural entropy (Li & Pan 2016) and its greedy minimisation, kept incrementally.

H²(G;P) = −Σⱼ (gⱼ/2m)·log₂(Vⱼ/2m) − Σⱼ Σ_{i∈Xⱼ} (dᵢ/2m)·log₂(dᵢ/Vⱼ), with dᵢ the weighted degree,
Vⱼ a module's volume, gⱼ the weight leaving it and 2m the total volume. Merging modules X and Y
with cut c changes it by

    ΔH = [(V_X−g_X)·log₂(V_XY/V_X) + (V_Y−g_Y)·log₂(V_XY/V_Y) − 2c·log₂(2m/V_XY)] / 2m,

which depends on X, Y and 2m only: a merge elsewhere does not change it. Non-adjacent modules
(c = 0) never gain. The greedy optimiser merges the adjacent pair of most negative ΔH (a heap
with lazy invalidation by module version) until no merge lowers H².

Incremental rule. A new unit starts as its own module; each edge change updates the volumes,
cuts and versions of the two modules it touches, which become *affected*. ``settle`` then runs the
greedy merges from the candidate pairs: every pair of an affected module, plus every pair whose
merge has become favourable because the graph grew. The latter are found without a scan: ΔH < 0
exactly when log₂(2m) exceeds the pair's threshold τ = [(V_X−g_X)·log₂(V_XY/V_X) +
(V_Y−g_Y)·log₂(V_XY/V_Y)]/(2c) + log₂ V_XY, which does not depend on 2m, so a second heap keeps
every live pair by τ. After ``settle`` no adjacent pair has ΔH < 0 (a greedy local optimum);
modules are never split (a merge-only greedy, like the batch one).
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field
from typing import Iterable

EPS = 1e-12


def h2(edges: dict[tuple[int, int], float], partition: Iterable[Iterable[int]]) -> float:
    """H² of a weighted graph (undirected edges ``(i, j) -> w``, i != j) under a partition."""
    degree: dict[int, float] = {}
    for (i, j), w in edges.items():
        degree[i] = degree.get(i, 0.0) + w
        degree[j] = degree.get(j, 0.0) + w
    two_m = sum(degree.values())
    if two_m <= 0:
        return 0.0
    module = {i: k for k, members in enumerate(partition) for i in members}
    volume: dict[int, float] = {}
    leaving: dict[int, float] = {}
    for i, d in degree.items():
        volume[module[i]] = volume.get(module[i], 0.0) + d
    for (i, j), w in edges.items():
        if module[i] != module[j]:
            leaving[module[i]] = leaving.get(module[i], 0.0) + w
            leaving[module[j]] = leaving.get(module[j], 0.0) + w
    total = 0.0
    for k, v in volume.items():
        if v > 0:
            total -= leaving.get(k, 0.0) / two_m * math.log2(v / two_m)
    for i, d in degree.items():
        if d > 0:
            total -= d / two_m * math.log2(d / volume[module[i]])
    return total


def delta_h(vx: float, gx: float, vy: float, gy: float, cut: float, two_m: float) -> float:
    vxy = vx + vy
    return ((vx - gx) * math.log2(vxy / vx) + (vy - gy) * math.log2(vxy / vy)
            - 2 * cut * math.log2(two_m / vxy)) / two_m


def threshold(vx: float, gx: float, vy: float, gy: float, cut: float) -> float:
    """log₂(2m) above which merging the pair lowers H² (see the module notes)."""
    vxy = vx + vy
    return ((vx - gx) * math.log2(vxy / vx) + (vy - gy) * math.log2(vxy / vy)) / (2 * cut) + math.log2(vxy)


@dataclass
class Module:
    members: list[int]
    volume: float = 0.0
    leaving: float = 0.0
    cut: dict[int, float] = field(default_factory=dict)  # neighbouring module -> crossing weight
    version: int = 0


class Clusters:
    """A partition of the unit graph's nodes, kept at a greedy local optimum of H²."""

    def __init__(self) -> None:
        self.modules: dict[int, Module] = {}
        self.module_of: list[int] = []
        self.degree: list[float] = []
        self.two_m = 0.0
        self._next = 0
        self._affected: set[int] = set()
        self._trigger: list[tuple[float, int, int, int, int]] = []  # (τ, X, Y, version X, version Y)
        self.merges = 0

    # --- graph changes ---------------------------------------------------------------------------
    def add_node(self) -> int:
        node = len(self.module_of)
        self.module_of.append(self._new_module([node]))
        self.degree.append(0.0)
        return node

    def _new_module(self, members: list[int]) -> int:
        k = self._next
        self._next += 1
        self.modules[k] = Module(members)
        self._affected.add(k)
        return k

    def change_edge(self, i: int, j: int, dw: float) -> None:
        self.degree[i] += dw
        self.degree[j] += dw
        self.two_m += 2 * dw
        a, b = self.module_of[i], self.module_of[j]
        ma, mb = self.modules[a], self.modules[b]
        ma.volume += dw
        mb.volume += dw
        if a != b:
            ma.leaving += dw
            mb.leaving += dw
            for x, y, m in ((a, b, ma), (b, a, mb)):
                w = m.cut.get(y, 0.0) + dw
                if abs(w) < 1e-9:
                    m.cut.pop(y, None)
                else:
                    m.cut[y] = w
        for k, m in ((a, ma), (b, mb)):
            m.version += 1
            self._affected.add(k)

    # --- the greedy ------------------------------------------------------------------------------
    def _pair(self, x: int, y: int) -> tuple[float, float]:
        """(ΔH, τ) of merging modules x and y (adjacent)."""
        mx, my = self.modules[x], self.modules[y]
        c = mx.cut[y]
        return (delta_h(mx.volume, mx.leaving, my.volume, my.leaving, c, self.two_m),
                threshold(mx.volume, mx.leaving, my.volume, my.leaving, c))

    def _live(self, x: int, y: int, vx: int, vy: int) -> bool:
        mx, my = self.modules.get(x), self.modules.get(y)
        return mx is not None and my is not None and mx.version == vx and my.version == vy and y in mx.cut

    def settle(self) -> int:
        """Merge until no adjacent pair lowers H²; returns the number of merges."""
        if self.two_m <= EPS:
            self._affected.clear()
            return 0
        level = math.log2(self.two_m)
        heap: list[tuple[float, int, int, int, int]] = []
        for x in sorted(self._affected):
            if x in self.modules:
                self._push_pairs(x, heap)
        self._affected.clear()
        kept = []
        while self._trigger and self._trigger[0][0] < level:
            entry = heapq.heappop(self._trigger)
            _, x, y, vx, vy = entry
            if self._live(x, y, vx, vy):
                kept.append(entry)
                dh, _ = self._pair(x, y)
                heapq.heappush(heap, (dh, x, y, vx, vy))
        merges = 0
        while heap:
            dh, x, y, vx, vy = heapq.heappop(heap)
            if dh >= -EPS:
                break
            if not self._live(x, y, vx, vy):
                continue
            self._push_pairs(self._merge(x, y), heap)
            merges += 1
        for entry in kept:  # a favourable pair left unmerged only by rounding stays watched
            if self._live(*entry[1:]):
                heapq.heappush(self._trigger, entry)
        self.merges += merges
        self._compact()
        return merges

    def _compact(self) -> None:
        """Drop stale watch entries once they outnumber the live pairs eightfold (the heap stays O(pairs))."""
        live = sum(len(m.cut) for m in self.modules.values()) // 2
        if len(self._trigger) > max(4_096, 8 * live):
            self._trigger = [e for e in self._trigger if self._live(*e[1:])]
            heapq.heapify(self._trigger)

    def _push_pairs(self, x: int, heap: list[tuple[float, int, int, int, int]]) -> None:
        mx = self.modules[x]
        for y in sorted(mx.cut):
            a, b = min(x, y), max(x, y)
            dh, tau = self._pair(a, b)
            entry = (a, b, self.modules[a].version, self.modules[b].version)
            heapq.heappush(self._trigger, (tau, *entry))
            heapq.heappush(heap, (dh, *entry))

    def _merge(self, x: int, y: int) -> int:
        mx, my = self.modules.pop(x), self.modules.pop(y)
        z = self._next
        self._next += 1
        c = mx.cut.pop(y)
        my.cut.pop(x)
        merged = Module(sorted(mx.members + my.members), mx.volume + my.volume, mx.leaving + my.leaving - 2 * c)
        for source, other in ((mx, x), (my, y)):
            for k, w in source.cut.items():
                merged.cut[k] = merged.cut.get(k, 0.0) + w
                neighbour = self.modules[k]
                neighbour.cut.pop(other)
                neighbour.cut[z] = neighbour.cut.get(z, 0.0) + w  # its other pairs' ΔH is unchanged
        self.modules[z] = merged
        for node in merged.members:
            self.module_of[node] = z
        return z

    # --- reading -----------------------------------------------------------------------------------
    def members(self, node: int) -> list[int]:
        return self.modules[self.module_of[node]].members

    def partition(self) -> list[list[int]]:
        return sorted(m.members for m in self.modules.values())


def greedy(n: int, edges: dict[tuple[int, int], float]) -> Clusters:
    """The batch greedy from singletons (the reference the incremental clustering is tested against)."""
    clusters = Clusters()
    for _ in range(n):
        clusters.add_node()
    for (i, j), w in sorted(edges.items()):
        clusters.change_edge(i, j, w)
    clusters.settle()
    return clusters
