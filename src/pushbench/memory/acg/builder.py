"""``acg``: the Adaptive Consistency Graph execution memory as a context builder (seed §3, App. A–B).

Each step the policy sees ``system``, the task, the decision view (one ``[memory]`` message right
after the task) and the recent history (the newest messages that fit, trimmed from the oldest
turn as ``full`` trims). Ingest (per observation event): split it into units with their
occurrence (``units``), add semantic and source-affinity edges (``graph``), settle the clustering
(``entropy``). Render: retrieve seeds for the task and the current event and expand them
(``retrieval``), build the requirement views (``views``), render them under the budget
(``render``): ``min(VIEW_CAP, room left after the task and the recent history)``, where the recent
history is trimmed to leave at least ``min(VIEW_CAP, VIEW_SHARE × window)`` for the view. The base
policy, its tools and the controller are unchanged; the memory offers no tools.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pushbench import guidance
from pushbench.memory.acg.entropy import Clusters
from pushbench.memory.acg.graph import UnitGraph
from pushbench.memory.acg.render import Rendered, Renderer
from pushbench.memory.acg.retrieval import SEEDS, TfIdfIndex, expand, interleave, ranked
from pushbench.memory.acg.units import UnitStore
from pushbench.memory.acg.views import DecisionView, build_view
from pushbench.memory.base import Event
from pushbench.memory.full import TRIM_SLACK
from pushbench.memory.retrieval import HashingEmbedder
from pushbench.requirements import Requirement
from pushbench.tokens import count_message_tokens

_BLAS: list[Any] = []  # one threadpoolctl controller per process, made on first use


def one_blas_thread() -> Any:
    """ACG's products are small mat-vecs (units × 256): OpenBLAS threads only slow them down, and
    badly on shared cores (measured 6.8 ms with two threads against 0.14 ms with one, at 1,800 units
    on a loaded two-core machine), so its work runs with one BLAS thread; the rest of the process is
    untouched."""
    if not _BLAS:
        from threadpoolctl import ThreadpoolController

        _BLAS.append(ThreadpoolController())
    return _BLAS[0].limit(limits=1, user_api="blas")


VIEW_CAP = 5_000  # tokens of the view at most (App. B.1)
VIEW_SHARE = 0.25  # of the window kept free of recent history for the view
DIMS = 256  # hashed embedding size


class ACGMemory:
    name = "acg"

    def __init__(self, view_cap: int = VIEW_CAP, view_share: float = VIEW_SHARE, dims: int = DIMS):
        if view_cap < 0 or not 0 <= view_share < 1:
            raise ValueError("view_cap must be >= 0 and view_share in [0, 1)")
        self.view_cap, self.view_share, self.dims = view_cap, view_share, dims

    # --- the contract ------------------------------------------------------------------------------
    def start(self, system: str, task: str) -> None:
        self.task = task
        self.head = [{"role": "system", "content": system}, {"role": "user", "content": task}]
        self.head_tokens = count_message_tokens(self.head)
        self.requirements: list[Requirement] = []
        self.embedder = HashingEmbedder(self.dims)
        self.store = UnitStore()
        self.graph = UnitGraph(self.dims)
        self.clusters = Clusters()
        self.index = TfIdfIndex(self.embedder)
        self.renderer = Renderer()
        self.messages: list[dict[str, Any]] = []
        self.tokens: list[int] = []
        self.first = 0  # oldest message of the recent window
        self.shown = 0  # tokens of messages[first:]
        self.events = 0
        self.current_event = -1
        self.current_counts = np.zeros(self.dims, dtype=np.float32)
        self.unit_counts: list[np.ndarray] = []
        self.last_action = ""
        self.step = 0
        self.last: Rendered = Rendered(None, 0)  # the latest view (traces, tests, recall replay)
        self.last_view: DecisionView | None = None
        self._cached: tuple[int, int, list[dict[str, Any]]] | None = None

    def bind_requirements(self, requirements: list[Requirement]) -> None:
        """The task's requirements (ids validated against these on every ingest)."""
        self.requirements = list(requirements)

    def ingest(self, event: Event) -> None:
        index = self.events
        self.events += 1
        self.step = max(self.step, event.step)
        self.messages.append(event.message)
        cost = count_message_tokens([event.message]) - 3
        self.tokens.append(cost)
        self.shown += cost
        if event.kind == "action":
            self.last_action = action_text(event.message)
        if event.kind != "observation":
            return
        with one_blas_thread():
            self._ingest_observation(index, event)

    def _ingest_observation(self, index: int, event: Event) -> None:
        members, new = self.store.add_observation(index, event, [r.id for r in self.requirements])
        for uid in new:
            self._add_unit(self.store.units[uid].text)
        for i, j, dw in self.graph.add_source(members):
            self.clusters.change_edge(i, j, dw)
        self.clusters.settle()
        self.current_event = index
        # The event query: the call's words and the observation's, from the units' stored counts.
        self.current_counts = self.embedder.counts(self.last_action)
        for uid in members:
            self.current_counts = self.current_counts + self.unit_counts[uid]

    def _add_unit(self, text: str) -> None:
        counts = self.embedder.counts(text)
        self.unit_counts.append(counts)
        self.clusters.add_node()
        for i, j, dw in self.graph.add_unit(self.index.add(counts)):
            self.clusters.change_edge(i, j, dw)
        self.renderer.cost([guidance.quoted(line) for line in text.splitlines()])  # token counts, once per unit

    def render(self, budget_tokens: int) -> list[dict[str, Any]]:
        if self._cached and self._cached[:2] == (self.events, budget_tokens):
            return self._cached[2]
        reserve = min(self.view_cap, int(self.view_share * budget_tokens))
        self._trim(budget_tokens - self.head_tokens - reserve, budget_tokens)
        room = budget_tokens - self.head_tokens - self.shown
        with one_blas_thread():
            self.last_view = self.decision_view()
            self.last = self.renderer.render(self.last_view, self.store, self.current_event, min(self.view_cap, room))
        view = [{"role": "user", "content": self.last.text}] if self.last.text else []
        out = self.head + view + self.messages[self.first:]
        self._cached = (self.events, budget_tokens, out)
        return out

    # --- parts ---------------------------------------------------------------------------------------
    def retrieve(self) -> list[int]:
        """Seeds for the task and the current event (units of earlier events), expanded one hop and by cluster."""
        n = len(self.store)
        if not n:
            return []
        allowed = np.ones(n, dtype=bool)
        for uid in self.store.by_event.get(self.current_event, []):
            if len(self.store.units[uid].occurrences) == 1:
                allowed[uid] = False
        lists = [ranked(self.index.scores(q), allowed, SEEDS) for q in (self.task, self.current_counts)]
        return expand(interleave(lists, SEEDS), self.graph, self.clusters, allowed)

    def decision_view(self) -> DecisionView:
        return build_view(self.store, self.index, self.requirements, self.retrieve(), self.current_event, self.step)

    def _trim(self, room: int, window: int) -> None:
        """Drop the oldest turns once the recent history exceeds ``room`` (30% of the window below it at once)."""
        if self.shown <= room:
            return
        goal = room - int(TRIM_SLACK * window)
        n = len(self.messages)
        while self.first < n and self.shown > goal:
            self.shown -= self.tokens[self.first]
            self.first += 1
            while self.first < n and self.messages[self.first].get("role") != "assistant":
                self.shown -= self.tokens[self.first]
                self.first += 1


def action_text(message: dict[str, Any]) -> str:
    """An assistant message as query words: its text and each call's name and arguments."""
    parts = [str(message.get("content") or "")]
    for call in message.get("tool_calls") or []:
        fn = call.get("function", {})
        parts += [str(fn.get("name", "")), str(fn.get("arguments", ""))]
    return " ".join(p for p in parts if p)
