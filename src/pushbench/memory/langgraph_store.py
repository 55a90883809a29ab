"""``langgraph-store``: LangGraph long-term memory (a ``BaseStore`` with semantic search) + recent messages.

Every event (action, observation, internal call) is put into a LangGraph ``InMemoryStore`` under
the episode's namespace, embedded offline with hashed term-frequency vectors
(``retrieval.HashingEmbedder``, passed as ``index={"embed": ..., "dims": ...}``). Each step the
builder ranks the stored items older than the recent window twice — for the task text and for the
current (latest) event — interleaves the two top-k lists into up to ``2k`` unique items and shows
them as one ``[memory]`` message after the task, followed by the most recent messages (the newest
that fit half the window, starting at an assistant message).

Ranking is cosine similarity over the vectors the store holds, exactly as ``InMemoryStore.search``
ranks them (ties in insertion order). By default it is computed with one numpy product over a copy
of those vectors, because ``InMemoryStore.search`` scans its items in Python with a per-item filter
check and a thread pool per query (~19 ms per query at 1,000 items on this machine, against a 2 ms
per-step target); ``use_store_search=True`` runs the store's own ``batch`` of two ``SearchOp``s
instead, and the tests check both give the same items.

On the LangGraph backend the thread's checkpointer is the short-term memory: the transcript it keeps
is what this builder receives as events, so the recent window is the checkpointed thread trimmed to
fit. Integration point: compile the graph with ``store=memory.store`` (and use ``memory.namespace``,
or pass the thread id as ``namespace``) so nodes can read the same store; nothing else changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np
from langgraph.store.base import IndexConfig, SearchItem, SearchOp
from langgraph.store.memory import InMemoryStore

from pushbench import guidance
from pushbench.memory.base import Event
from pushbench.memory.memgpt import message_text
from pushbench.memory.retrieval import HashingEmbedder
from pushbench.tokens import count_message_tokens

TOP_K = 3  # items per query (task, current event)
DIMS = 256  # embedding size: small enough that a search over 1,000 items stays well under a millisecond
RECENT_FRACTION = 0.5  # of the window for the recent messages (LangGraph's trim_messages, strategy "last")
MEMORY_FRACTION = 0.2  # of the window at most for the retrieved items
ITEM_CHARS = 2_500  # a retrieved item shows at most this much text
HEADER = guidance.RETRIEVED  # the message's first line (SimLM's guidance vocabulary)


class LangGraphStoreMemory:
    name = "langgraph-store"

    def __init__(self, top_k: int = TOP_K, dims: int = DIMS, namespace: tuple[str, ...] = ("episode",),
                 use_store_search: bool = False):
        if top_k < 1:
            raise ValueError(f"top_k must be at least 1, got {top_k}")
        self.top_k, self.dims, self.namespace = top_k, dims, namespace
        self.use_store_search = use_store_search

    def start(self, system: str, task: str) -> None:
        self.embedder = HashingEmbedder(self.dims)
        self.store = InMemoryStore(index=IndexConfig(embed=self._embed, dims=self.dims, fields=["text"]))
        self.task = task
        self.head = [{"role": "system", "content": system}, {"role": "user", "content": task}]
        self.head_tokens = count_message_tokens(self.head)
        self.messages: list[dict[str, Any]] = []
        self.tokens: list[int] = []
        self.first = 0  # oldest message of the recent window
        self.shown = 0  # tokens of messages[first:]
        self.current = task
        self.retrieved: list[int] = []  # item indices shown at the last render (for traces and tests)
        self.vectors = np.zeros((256, self.dims), dtype=np.float32)  # the store's vectors, by item index
        self.block_tokens: dict[int, int] = {}

    def _embed(self, texts: Sequence[str]) -> list[Any]:
        return self.embedder.embed_documents(list(texts))

    def ingest(self, event: Event) -> None:
        index = len(self.messages)
        text = message_text(event.message)
        self.store.put(self.namespace, f"{index:06d}", {
            "text": text, "index": index, "step": event.step, "kind": event.kind,
            "role": event.message.get("role"), "tool": event.origin.get("tool")})
        if index == len(self.vectors):
            self.vectors = np.concatenate([self.vectors, np.zeros_like(self.vectors)])
        self.vectors[index] = self.embedder.embed(text)  # the same (cached) vector the store just indexed
        cost = count_message_tokens([event.message]) - 3
        self.messages.append(event.message)
        self.tokens.append(cost)
        self.shown += cost
        if text:
            self.current = text

    def render(self, budget_tokens: int) -> list[dict[str, Any]]:
        self._trim(int(RECENT_FRACTION * budget_tokens) - self.head_tokens)
        memories = self._memory_message(int(MEMORY_FRACTION * budget_tokens))
        return self.head + ([memories] if memories else []) + self.messages[self.first:]

    # --- recent window -----------------------------------------------------------------------
    def _trim(self, room: int) -> None:
        """Drop the oldest messages until the rest fit ``room``; the window starts at an assistant message."""
        n = len(self.messages)
        while self.first < n and self.shown > room:
            self.shown -= self.tokens[self.first]
            self.first += 1
            while self.first < n and self.messages[self.first].get("role") != "assistant":
                self.shown -= self.tokens[self.first]
                self.first += 1

    # --- retrieval ---------------------------------------------------------------------------
    def search(self, before: int) -> list[int]:
        """Indices of the top items for the task and the current event among items ``< before``."""
        if before <= 0:
            return []
        ranked = self._store_search(before) if self.use_store_search else self._scan(before)
        out: list[int] = []
        for pair in zip(*(r + [-1] * (self.top_k - len(r)) for r in ranked)):
            out += [i for i in pair if i >= 0 and i not in out]
        return out

    def _scan(self, before: int) -> list[list[int]]:
        rows = self.vectors[:before]
        ranked = []
        for query in (self.task, self.current):
            scores = rows @ self.embedder.embed(query)
            top = np.argsort(-scores, kind="stable")[: self.top_k]
            ranked.append([int(i) for i in top if scores[i] > 0])
        return ranked

    def _store_search(self, before: int) -> list[list[int]]:
        flt = {"index": {"$lt": before}}
        ops = [SearchOp(self.namespace, filter=flt, limit=self.top_k, query=q) for q in (self.task, self.current)]
        results = cast(list[list[SearchItem]], self.store.batch(ops))  # a SearchOp's result is a list of SearchItem
        return [[item.value["index"] for item in result if (item.score or 0) > 0] for result in results]

    def _memory_message(self, cap: int) -> dict[str, Any] | None:
        self.retrieved = []
        lines = [HEADER]
        used = count_message_tokens([{"role": "user", "content": HEADER}])
        for index in self.search(self.first):
            message = self.messages[index]
            text = message_text(message)
            text = text[:ITEM_CHARS] + (" [...]" if len(text) > ITEM_CHARS else "")
            block = guidance.retrieved_item(self._step(index), message.get("role"), text)
            cost = self.block_tokens.get(index)
            if cost is None:
                cost = self.block_tokens[index] = count_message_tokens([{"role": "user", "content": block}]) - 6
            if used + cost > cap:
                continue
            used += cost
            lines.append(block)
            self.retrieved.append(index)
        return {"role": "user", "content": "\n".join(lines)} if self.retrieved else None

    def _step(self, index: int) -> int:
        item = self.store.get(self.namespace, f"{index:06d}")
        return int(item.value["step"]) if item else -1
