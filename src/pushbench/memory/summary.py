"""``summary``: a rolling-summary memory, shaped like agent frameworks' summarising condensers
(OpenHands' ``LLMSummarizingCondenser``): keep a fixed head, one summary message and the recent turns.

The view is ``[system, task, summary?, recent messages]``. When the messages since the last summary
pass a token threshold (``trigger_tokens`` in params.yaml ``summary_memory``, or less when the
model's window leaves less room), the oldest of them are condensed: everything but the newest
``keep_fraction`` of the threshold's tokens, cut so the kept part starts at an assistant message (a
tool result stays with its call). The previous summary and the condensed messages go to the policy
itself with a summary request (an LLM call through the same policy, counted in ``llm_calls`` and
tokens, its reply kept in the transcript as ``memory-summary``); the reply replaces them. What the
summary leaves out is gone: unlike ``memgpt`` there is no searchable recall store.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pushbench import config, guidance
from pushbench.memory.base import Event, SideLLM
from pushbench.tokens import count_message_tokens


@dataclass(frozen=True)
class SummarySettings:
    trigger_tokens: int = 12_000
    keep_fraction: float = 0.5
    summary_tokens: int = 2_000

    @classmethod
    def from_params(cls) -> "SummarySettings":
        try:
            block = config.params("summary_memory")
        except KeyError:
            return cls()
        settings = cls(int(block.get("trigger_tokens", cls.trigger_tokens)),
                       float(block.get("keep_fraction", cls.keep_fraction)),
                       int(block.get("summary_tokens", cls.summary_tokens)))
        settings.check()
        return settings

    def check(self) -> None:
        if self.trigger_tokens < 1 or self.summary_tokens < 1 or not 0 < self.keep_fraction < 1:
            raise ValueError("summary_memory needs trigger_tokens >= 1, summary_tokens >= 1 and 0 < keep_fraction < 1")


class SummaryMemory:
    name = "summary"

    def __init__(self, settings: SummarySettings | None = None):
        self.settings = settings or SummarySettings.from_params()
        self.settings.check()
        self.llm: SideLLM | None = None

    # --- contract ----------------------------------------------------------------------------
    def start(self, system: str, task: str) -> None:
        self.head = [{"role": "system", "content": system}, {"role": "user", "content": task}]
        self.head_tokens = count_message_tokens(self.head)
        self.messages: list[dict[str, Any]] = []
        self.tokens: list[int] = []
        self.total = 0
        self.summary: dict[str, Any] | None = None
        self.summary_tokens = 0
        self.condensed = 0  # messages replaced by the summary so far
        self.log: list[dict[str, Any]] = []  # the builder's own choices (condensations), for traces
        self.step = 0
        self.view: list[dict[str, Any]] | None = None

    def bind(self, llm: SideLLM) -> None:
        self.llm = llm

    def ingest(self, event: Event) -> None:
        self.step = event.step
        cost = count_message_tokens([event.message]) - 3
        self.messages.append(event.message)
        self.tokens.append(cost)
        self.total += cost
        if self.view is not None:
            self.view.append(event.message)

    def render(self, budget_tokens: int) -> list[dict[str, Any]]:
        room = budget_tokens - self.head_tokens - self.summary_tokens
        threshold = min(self.settings.trigger_tokens, room)
        if self.total > threshold:
            self._condense(threshold)
            self._trim(budget_tokens - self.head_tokens - self.summary_tokens)
        if self.view is None:
            self.view = self.head + ([self.summary] if self.summary else []) + self.messages
        return self.view

    # --- condensing --------------------------------------------------------------------------
    def _cut(self, threshold: int) -> int:
        """The number of oldest messages to condense: all but the newest ``keep_fraction`` of the
        threshold's tokens, ending before an assistant message."""
        keep = self.settings.keep_fraction * max(threshold, 0)
        rest, i = self.total, 0
        while i < len(self.messages) and rest > keep:
            rest -= self.tokens[i]
            i += 1
        while i < len(self.messages) and self.messages[i].get("role") != "assistant":
            i += 1
        return i

    def _condense(self, threshold: int) -> None:
        cut = self._cut(threshold)
        if cut == 0:
            return
        gone = self.messages[:cut]
        text = self._summarise(gone)
        self.messages, self.tokens = self.messages[cut:], self.tokens[cut:]
        self.total = sum(self.tokens)
        self.condensed += cut
        self.summary = {"role": "user", "content": guidance.condensed_summary(
            self.condensed, self.settings.trigger_tokens, text)}
        self.summary_tokens = count_message_tokens([self.summary]) - 3
        self.log.append({"step": self.step, "condensed": cut, "kept": len(self.messages),
                         "summary_tokens": self.summary_tokens})
        self.view = None

    def _summarise(self, history: list[dict[str, Any]]) -> str:
        from pushbench.memory.memgpt import plain  # memgpt's text form of a turn (imported only when needed)

        if self.llm is None:
            return f"(no summary: {len(history)} messages were condensed without a model to summarise them)"
        previous = [{"role": "user", "content": str(self.summary["content"])}] if self.summary else []
        request = [{"role": "system", "content": guidance.SUMMARY_SYSTEM}, self.head[1], *previous,
                   *(plain(m) for m in history),
                   {"role": "user", "content": guidance.condense_request(self.settings.summary_tokens)}]
        reply = self.llm(request, [], "summary")
        return str(reply.get("content") or "").strip() or "(the summary came back empty)"

    def _trim(self, room: int) -> None:
        """A window smaller than summary + kept turns: drop the oldest kept turns (as ``full`` does)."""
        while self.messages and self.total > room:
            self.total -= self.tokens.pop(0)
            self.messages.pop(0)
            while self.messages and self.messages[0].get("role") != "assistant":
                self.total -= self.tokens.pop(0)
                self.messages.pop(0)
            self.view = None


__all__ = ["SummaryMemory", "SummarySettings"]
