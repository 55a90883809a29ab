"""``memgpt``: the Letta/MemGPT memory design, re-implemented as a context builder (no server).

The view the policy sees each step is ``[system + core memory, task, summary?, recent messages]``:

- **Core memory**: blocks ``persona``, ``task`` and ``progress``, rendered into the system prompt with
  their character usage and limit (2,000 characters each, as in the original MemGPT). The policy
  edits them with ``core_memory_append(label, content)`` and ``core_memory_replace(label,
  old_content, new_content)``; text not found, an unknown block or an edit past the limit is an
  ``ERROR:`` observation and changes nothing. As in Letta, the system prompt (with the memory
  statistics) is recompiled only when memory changes, not every step.
- **Archival memory**: passages the policy inserts (``archival_memory_insert``) and searches
  (``archival_memory_search(query, page)``, hashed TF-IDF, 5 per page).
- **Recall memory**: every message of the episode, searchable with ``conversation_search(query,
  page)`` even after it was evicted (results are quoted with ``| `` so they read as quotations).
- **Eviction**: at 90% of the window a memory-pressure warning is added (once per cycle). When the
  view would exceed the window, the oldest ~30% of messages are evicted (raised in steps of 10%
  until the rest plus a 10% reserve for the summary fits), cut so the kept part starts at an
  assistant message; the previous summary and the evicted messages go to the policy itself with a
  summarise instruction (an extra LLM call), and its reply becomes the new summary message.

Memory tool calls are internal (see ``memory/base.py``): LLM calls, no budget steps.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Callable

import fastjsonschema

from pushbench import guidance
from pushbench.memory.base import Event, SideLLM
from pushbench.memory.retrieval import VectorIndex, pages
from pushbench.tokens import count_message_tokens
from pushbench.tools.base import ToolCall

BLOCK_LIMIT = 2_000  # characters per core block (MemGPT's original persona/human limit)
WARNING_FRACTION = 0.9  # memory-pressure warning (MemGPT warns at 75% but then evicts 75%; after a 30% eviction the view sits near 75%)
EVICT_START, EVICT_STEP = 0.3, 0.1  # evict the oldest 30% of messages, more in 10% steps until it fits
SUMMARY_RESERVE = 0.1  # of the window, kept free for the summary when choosing the cut
MAX_ROUNDS = 3  # eviction rounds per render when a summary itself overflows
PAGE_SIZE = 5  # search results per page
RESULT_CHARS = 1_500  # a conversation_search result shows at most this much of a message

# The prompt texts and notices are SimLM's guidance vocabulary (pushbench.guidance); the names stay here.
PERSONA, INSTRUCTIONS, WARNING = guidance.MEMGPT_PERSONA, guidance.MEMGPT_RULES, guidance.MEMORY_WARNING
SUMMARY_SYSTEM, SUMMARY_REQUEST = guidance.SUMMARY_SYSTEM, guidance.SUMMARY_REQUEST


def _schema(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": properties, "required": required, "additionalProperties": False}}}


_TEXT = {"type": "string", "maxLength": 4_000}
_LABEL = {"type": "string", "description": "Block label: persona, task or progress."}
_PAGE = {"type": "integer", "minimum": 1, "default": 1, "description": "Result page (1-based)."}
TOOLS = [
    _schema("core_memory_append", "Append text to a core memory block (a new line).",
            {"label": _LABEL, "content": _TEXT}, ["label", "content"]),
    _schema("core_memory_replace", "Replace text in a core memory block; old_content must match exactly. "
            "To delete, use an empty new_content.",
            {"label": _LABEL, "old_content": _TEXT, "new_content": _TEXT}, ["label", "old_content", "new_content"]),
    _schema("archival_memory_insert", "Store a passage in archival memory (unlimited, searchable).",
            {"content": _TEXT}, ["content"]),
    _schema("archival_memory_search", f"Search archival memory by meaning; {PAGE_SIZE} results per page.",
            {"query": _TEXT, "page": _PAGE}, ["query"]),
    _schema("conversation_search", f"Search every earlier message of this episode (also evicted ones); "
            f"{PAGE_SIZE} results per page.", {"query": _TEXT, "page": _PAGE}, ["query"]),
]
_VALIDATE = {t["function"]["name"]: fastjsonschema.compile(t["function"]["parameters"]) for t in TOOLS}
TOOL_TOKENS = count_message_tokens([], TOOLS) - 3


class MemoryCallError(Exception):
    """A refused memory call: its text is the observation."""


@dataclass
class Block:
    label: str
    value: str
    limit: int = BLOCK_LIMIT

    def render(self) -> str:
        return guidance.core_block(self.label, self.value, self.limit)


def message_text(message: dict[str, Any]) -> str:
    """A message as plain text (content, then each tool call as ``name arguments``)."""
    parts = [str(message.get("content") or "")]
    for call in message.get("tool_calls") or []:
        fn = call.get("function", {})
        parts.append(f"called {fn.get('name', '')} {fn.get('arguments', '')}")
    return "\n".join(p for p in parts if p)


def plain(message: dict[str, Any]) -> dict[str, Any]:
    """A history message for the summary request (no tool schemas there): calls and results as text."""
    if message.get("role") == "assistant":
        return {"role": "assistant", "content": message_text(message)}
    if message.get("role") == "tool":
        return {"role": "user", "content": "Tool result:\n" + str(message.get("content") or "")}
    return {"role": message.get("role", "user"), "content": str(message.get("content") or "")}


class MemGPTMemory:
    name = "memgpt"
    view: list[dict[str, Any]] | None  # the compiled messages, until the memory changes

    def __init__(self, block_limit: int = BLOCK_LIMIT):
        self.block_limit = block_limit
        self.llm: SideLLM | None = None

    # --- contract ----------------------------------------------------------------------------
    def start(self, system: str, task: str) -> None:
        self.base_system = system
        self.task_message = {"role": "user", "content": task}
        self.task_tokens = count_message_tokens([self.task_message]) - 3
        self.blocks = {b.label: b for b in (Block("persona", PERSONA[: self.block_limit], self.block_limit),
                                            Block("task", task[: self.block_limit], self.block_limit),
                                            Block("progress", "", self.block_limit))}
        self.archival: list[str] = []
        self.archival_index = VectorIndex()
        self.recall: list[tuple[int, dict[str, Any]]] = []  # (step, message), every message
        self.recall_index = VectorIndex()
        self.messages: list[dict[str, Any]] = []
        self.tokens: list[int] = []
        self.total = 0
        self.summary: dict[str, Any] | None = None
        self.summary_tokens = 0
        self.evicted = 0
        self.warned = False
        self.step = 0
        self.log: list[dict[str, Any]] = []  # the builder's own choices (evictions), for traces
        self._compile()

    def bind(self, llm: SideLLM) -> None:
        self.llm = llm

    def tools(self) -> list[dict[str, Any]]:
        return TOOLS

    def ingest(self, event: Event) -> None:
        self.step = event.step
        self._append(event.message)

    def render(self, budget_tokens: int) -> list[dict[str, Any]]:
        if self.head_tokens() + self.total > budget_tokens:
            self._evict(budget_tokens)
        elif not self.warned and self.head_tokens() + self.total > WARNING_FRACTION * budget_tokens:
            self.warned = True
            self._append({"role": "user", "content": WARNING})
        if self.view is None:
            head = [self.system_message, self.task_message] + ([self.summary] if self.summary else [])
            self.view = head + self.messages
        return self.view

    def handle(self, call: ToolCall) -> str | None:
        handler = self._handlers().get(call.name)
        if handler is None:
            return None
        args = call.arguments
        try:
            if isinstance(args, str):
                try:
                    args = json.loads(args) if args.strip() else {}
                except json.JSONDecodeError as err:
                    raise MemoryCallError(f"arguments are not valid JSON ({err.msg})") from None
            if not isinstance(args, dict):
                raise MemoryCallError("arguments must be a JSON object")
            try:
                _VALIDATE[call.name](args)
            except fastjsonschema.JsonSchemaValueException as err:
                raise MemoryCallError(f"invalid arguments for {call.name}: {err.message[:200]}") from None
            return handler(**args)
        except MemoryCallError as err:
            return f"ERROR: {err}"

    # --- view bookkeeping --------------------------------------------------------------------
    def head_tokens(self) -> int:
        return self.system_tokens + self.task_tokens + self.summary_tokens + TOOL_TOKENS

    def _append(self, message: dict[str, Any]) -> None:
        cost = count_message_tokens([message]) - 3
        self.messages.append(message)
        self.tokens.append(cost)
        self.total += cost
        self.recall.append((self.step, message))
        self.recall_index.add(message_text(message))
        if self.view is not None:
            self.view.append(message)

    def _compile(self) -> None:
        """Rebuild the system prompt (only when memory changed, as Letta does)."""
        stats = guidance.memory_stats(len(self.recall), len(self.archival))
        blocks = "\n".join(b.render() for b in self.blocks.values())
        self.system_message = {"role": "system",
                               "content": f"{self.base_system}\n\n{INSTRUCTIONS}\n\n{stats}\n{blocks}"}
        self.system_tokens = count_message_tokens([self.system_message]) - 3
        self.view = None

    # --- eviction ----------------------------------------------------------------------------
    def _cut(self, budget: int) -> int:
        """Messages to evict: the oldest ~30%, raised in steps, ending before an assistant message."""
        n, fixed = len(self.messages), self.head_tokens() - self.summary_tokens
        reserve = SUMMARY_RESERVE * budget
        frac = EVICT_START
        while True:
            start = min(n, math.ceil(frac * n))
            cut = next((i for i in range(start, n) if self.messages[i].get("role") == "assistant"), n)
            if fixed + self.total - sum(self.tokens[:cut]) + reserve <= budget or cut >= n:
                return cut
            frac += EVICT_STEP

    def _evict(self, budget: int) -> None:
        for _ in range(MAX_ROUNDS):
            cut = self._cut(budget)
            if cut == 0:
                return
            gone = self.messages[:cut]
            text = self._summarise(([self.summary] if self.summary else []) + gone)
            self.messages, self.tokens = self.messages[cut:], self.tokens[cut:]
            self.total = sum(self.tokens)
            self.evicted += cut
            self.summary = {"role": "user", "content": guidance.evicted_summary(self.evicted, len(self.recall), text)}
            self.summary_tokens = count_message_tokens([self.summary]) - 3
            self.warned = False
            self.log.append({"step": self.step, "evicted": cut, "kept": len(self.messages),
                             "summary_tokens": self.summary_tokens})
            self._compile()
            if self.head_tokens() + self.total <= budget:
                return

    def _summarise(self, history: list[dict[str, Any]]) -> str:
        if self.llm is None:
            return f"(no summary: {len(history)} messages were evicted without a model to summarise them)"
        request = [{"role": "system", "content": SUMMARY_SYSTEM}, self.task_message,
                   *(plain(m) for m in history), {"role": "user", "content": SUMMARY_REQUEST}]
        reply = self.llm(request, [], "summary")
        return str(reply.get("content") or "").strip() or "(the summary came back empty)"

    # --- memory tools ------------------------------------------------------------------------
    def _handlers(self) -> dict[str, Callable[..., str]]:
        return {"core_memory_append": self._append_block, "core_memory_replace": self._replace_block,
                "archival_memory_insert": self._insert, "archival_memory_search": self._search_archival,
                "conversation_search": self._search_recall}

    def _block(self, label: str) -> Block:
        if label not in self.blocks:
            raise MemoryCallError(f"no core memory block {label!r}; blocks: {', '.join(self.blocks)}")
        return self.blocks[label]

    def _set(self, block: Block, value: str) -> str:
        if len(value) > block.limit:
            raise MemoryCallError(f"edit refused: block {block.label!r} would hold {len(value)} characters; its "
                               f"limit is {block.limit} ({len(block.value)} used). Shorten or replace text.")
        block.value = value
        self._compile()
        return f"core memory block {block.label!r} updated: {len(value)}/{block.limit} characters."

    def _append_block(self, label: str, content: str) -> str:
        block = self._block(label)
        return self._set(block, f"{block.value}\n{content}" if block.value else content)

    def _replace_block(self, label: str, old_content: str, new_content: str) -> str:
        block = self._block(label)
        if not old_content:
            raise MemoryCallError("old_content is empty; use core_memory_append to add text")
        if old_content not in block.value:
            raise MemoryCallError(f"old_content not found in core memory block {label!r}; nothing was changed")
        return self._set(block, block.value.replace(old_content, new_content))

    def _insert(self, content: str) -> str:
        if not content.strip():
            raise MemoryCallError("archival_memory_insert needs non-empty content")
        self.archival.append(content)
        self.archival_index.add(content)
        self._compile()
        return f"archival memory: passage {len(self.archival)} stored ({len(self.archival)} passages)."

    def _page(self, tool: str, index: VectorIndex, query: str, page: int) -> tuple[str, list[int]]:
        hits, total = index.search(query, PAGE_SIZE, (page - 1) * PAGE_SIZE)
        if not hits:
            what = f"no results on page {page} ({total} results)" if total else "no results"
            return f'{tool} "{query}": {what}', []
        return f'{tool} "{query}": page {page} of {pages(total, PAGE_SIZE)} ({total} results)', [h.index for h in hits]

    def _search_archival(self, query: str, page: int = 1) -> str:
        header, found = self._page("archival_memory_search", self.archival_index, query, page)
        lines = [header]
        for rank, i in enumerate(found, (page - 1) * PAGE_SIZE + 1):
            lines += [f"({rank}) passage {i + 1}:", self.archival[i]]
        return "\n".join(lines)

    def _search_recall(self, query: str, page: int = 1) -> str:
        header, found = self._page("conversation_search", self.recall_index, query, page)
        lines = [header]
        for rank, i in enumerate(found, (page - 1) * PAGE_SIZE + 1):
            step, message = self.recall[i]
            text = message_text(message)
            cut = text[:RESULT_CHARS] + (guidance.QUOTE_CUT if len(text) > RESULT_CHARS else "")
            lines.append(f"({rank}) step {step}, {message.get('role')}:")
            lines += [guidance.quoted(line) for line in cut.splitlines()]
        return "\n".join(lines)


__all__ = ["Block", "MemGPTMemory", "TOOLS"]
