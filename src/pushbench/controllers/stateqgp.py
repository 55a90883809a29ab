"""StateQGP: progress state over retrieval — dedupe, page memory, candidate buffer, gated final.

Parts switch off separately for the ablation (``stateqgp-dedupe``, ``stateqgp-pages``,
``stateqgp-nobuffer``, full ``stateqgp``). Every variant gates final and shows a progress block
with the verified count in every observation; dedupe acts on an item set's ``submit(ids)``. Page
memory and the buffer need a paged search (the tool role "paged-search", ``tools.items.PagedSearch``):
on a family without one they stay off, and the runner refuses the variants that are only dedupe and
pages (``registry.CONTROLLERS``' ``needs``).
"""

from __future__ import annotations

from typing import Any

from pushbench import guidance
from pushbench.controllers.base import Controller, Intercept, final_gate
from pushbench.tools.base import Environment, Observation, ToolCall
from pushbench.tools.items import PagedSearch


class StateQGPController(Controller):
    def __init__(self, name: str = "stateqgp", dedupe: bool = True, pages: bool = True, buffer: bool = True):
        self.name, self.dedupe, self.pages, self.buffer = name, dedupe, pages, buffer
        self.submitted: set[str] = set()
        self.read: dict[str, set[int]] = {}  # query -> pages read
        self.page_count: dict[str, int] = {}
        self.order: list[str] = []  # queries in first-use order
        self.pending: dict[str, Any] = {}  # uid -> Hit read on an earlier page, never submitted
        self.fresh: dict[str, Any] = {}  # hits of the page just read
        self.notes: list[str] = []
        self.intercepted = False

    def system_note(self) -> str:
        return guidance.ITEM_RULES

    # --- before the action -------------------------------------------------------------------
    def before(self, call: ToolCall, env: Environment) -> ToolCall | Intercept:
        decision = self._decide(call, env)
        self.intercepted = isinstance(decision, Intercept)
        return decision

    def _decide(self, call: ToolCall, env: Environment) -> ToolCall | Intercept:
        self.notes = []
        gate = final_gate(call, env)
        if gate:
            return gate
        args = call.arguments if isinstance(call.arguments, dict) else None
        if args is None:
            return call  # malformed arguments: let the environment report the error
        if call.name == "submit" and self.dedupe and isinstance(args.get("ids"), list):
            return self._dedupe(call, args, env)
        if call.name == "search" and self.pages and isinstance(args.get("query"), str):
            return self._advance(call, args)
        return call

    def _dedupe(self, call: ToolCall, args: dict[str, Any], env: Environment) -> ToolCall | Intercept:
        ids, kept = args["ids"], []
        for item in ids:
            if isinstance(item, str) and item in self.submitted or item in kept:
                continue
            kept.append(item)
        dropped = len(ids) - len(kept)
        if dropped:
            self.notes.append(guidance.removed_submitted(dropped))
        if kept:
            return ToolCall("submit", {**args, "ids": kept}, call.call_id)
        if self.pages and self.order:
            query = self.order[-1]
            nxt = self._unseen_page(query)
            if nxt:
                self.notes.append(guidance.reading_instead(nxt, query))
                return ToolCall("search", {"query": query, "page": nxt}, call.call_id)
        return Intercept(guidance.NOTHING_SENT)

    def _advance(self, call: ToolCall, args: dict[str, Any]) -> ToolCall | Intercept:
        query, page = norm(args["query"]), args.get("page", 1)
        if not isinstance(page, int) or page not in self.read.get(query, set()):
            return call
        nxt = self._unseen_page(query)
        if nxt is None:
            return Intercept(guidance.all_pages_read(self.page_count[query], query))
        self.notes.append(guidance.page_advanced(page, query, nxt))
        return ToolCall("search", {**args, "query": query, "page": nxt}, call.call_id)

    def _unseen_page(self, query: str) -> int | None:
        total = self.page_count.get(query, 0)
        return next((p for p in range(1, total + 1) if p not in self.read.get(query, set())), None)

    # --- after the action --------------------------------------------------------------------
    def after(self, call: ToolCall, obs: Observation, env: Environment) -> Observation:
        extra = list(self.notes)
        args = call.arguments if isinstance(call.arguments, dict) else {}
        if self.intercepted:  # nothing was executed: no pages read, nothing submitted
            pass
        elif obs.ok and call.name == "search":
            extra += self._record_page(args, env)
        elif obs.ok and call.name == "submit":
            self.submitted.update(i for i in args.get("ids", []) if isinstance(i, str))
            for item in args.get("ids", []):
                self.pending.pop(item, None)
                self.fresh.pop(item, None)
            extra += self._resurface()
            self.pending.update(self.fresh)
            self.fresh = {}
        obs.text = "\n".join([obs.text, *extra, self._progress(env)])
        return obs

    def _record_page(self, args: dict[str, Any], env: Environment) -> list[str]:
        if not isinstance(env, PagedSearch):  # no paged search to remember pages of
            return []
        query, number = norm(args["query"]), args.get("page", 1)
        page = env.search_index.page(query, number)
        self.render_hits = env.render_hits  # the search family's own hit format
        if query not in self.read:
            self.order.append(query)
        self.read.setdefault(query, set()).add(number)
        self.page_count[query] = page.pages
        self.pending.update(self.fresh)  # moved on without submitting the previous page
        self.fresh = {h.uid: h for h in page.hits if h.uid not in self.submitted}
        return self._resurface() if len(self.pending) else []

    def _resurface(self) -> list[str]:
        if not self.buffer or not self.pending:
            return []
        hits = sorted(self.pending.values(), key=lambda h: h.rank)
        self.pending = {}
        return [guidance.buffered_hits(self.render_hits(hits))]

    def _progress(self, env: Environment) -> str:
        verified, target = env.verifier.valid_count, env.task.target
        read = [(q, sorted(self.read[q]), self.page_count[q]) for q in self.order[-6:]] if self.pages else None
        return guidance.item_progress(verified, target, len(self.submitted) if self.dedupe else None, read)

    def on_stop(self, env: Environment) -> Intercept | None:
        return final_gate(ToolCall("final", {}), env)



def norm(query: str) -> str:
    """Search ignores case and spacing, so page memory does too."""
    return " ".join(query.lower().split())
