"""Requirement-grounded decision views (seed §3.4, App. B.1).

A retrieved candidate qualifies for a requirement only through a validated origin link: one of
its occurrences was produced by an action whose origin named that requirement
(``Occurrence.requirements``). Per requirement, up to ``HISTORY_LIMIT`` qualified historical units
are kept, ranked by TF-IDF similarity to the requirement's text (ties newest first); qualified
units of the current event are kept separately. Candidates with no link stay *unassigned*: they
may be shown as associations, never under a requirement, whatever their similarity.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from pushbench.memory.acg.retrieval import TfIdfIndex
from pushbench.memory.acg.units import UnitStore
from pushbench.requirements import Requirement

HISTORY_LIMIT = 8


@dataclass
class RequirementView:
    requirement: Requirement
    current: list[int] = field(default_factory=list)  # qualified units of the current event
    history: list[int] = field(default_factory=list)  # qualified earlier units, best first


@dataclass
class DecisionView:
    step: int
    requirements: list[RequirementView]
    unassigned: list[int]  # retrieved candidates without a requirement link, retrieval order


def build_view(store: UnitStore, index: TfIdfIndex, requirements: list[Requirement], candidates: list[int],
               current_event: int, step: int) -> DecisionView:
    current = [u for u in store.by_event.get(current_event, [])]
    current_set = set(current)
    history = [u for u in candidates if u not in current_set]
    links = {u: set(store.units[u].requirements()) for u in dict.fromkeys(current + history)}
    views = []
    for req in requirements:
        qualified = [u for u in history if req.id in links[u]]
        views.append(RequirementView(req, [u for u in current if req.id in links[u]],
                                     _by_similarity(index, req.text, qualified)[:HISTORY_LIMIT]))
    unassigned = [u for u in history if not links[u]]
    return DecisionView(step, views, unassigned)


def _by_similarity(index: TfIdfIndex, text: str, units: list[int]) -> list[int]:
    if not units:
        return []
    rows = np.array(units, dtype=np.int64)
    scores = index.scores(text, rows)
    order = np.lexsort((-rows, -scores))
    return [int(rows[k]) for k in order]
