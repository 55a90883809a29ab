"""The policy contract: chat messages and tool schemas in, one assistant turn out."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from pushbench.tools.base import ToolCall


@dataclass
class Turn:
    """One model reply: the assistant message as the API returned it, and the parsed call."""

    message: dict[str, Any]
    call: ToolCall | None  # None when the model answered in text (it stops)
    input_tokens: int = 0
    output_tokens: int = 0


class PolicyStop(Exception):
    """The model cannot take another turn in this episode (its context is full, a reply was cut
    at ``max_tokens``, its time is up). The backend ends the episode with ``reason`` as its
    termination; ``turn``, when given, is the last reply, counted and kept in the transcript."""

    def __init__(self, reason: str, detail: str, turn: Turn | None = None):
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail
        self.turn = turn


class Policy(Protocol):
    name: str
    context_window: int  # tokens the model can attend to

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], seed: int) -> Turn: ...


@runtime_checkable
class ClosablePolicy(Protocol):
    """A policy holding connections (an API model's HTTP client): the runner closes it after the episode."""

    def close(self) -> None: ...


@runtime_checkable
class MeteredPolicy(Protocol):
    """A policy that counts its own usage (HTTP requests, cache hits, retries): the trace keeps it."""

    stats: Any


class EndpointPolicy(Policy, Protocol):
    """A policy behind an API endpoint: checked before the first paid call, closed after."""

    def check_endpoint(self) -> None: ...

    def close(self) -> None: ...


def tool_call_message(name: str, arguments: dict[str, Any] | str, call_id: str) -> dict[str, Any]:
    args = arguments if isinstance(arguments, str) else json.dumps(arguments, sort_keys=True)
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}]}


def text_message(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def turn_from_message(message: dict[str, Any], input_tokens: int = 0, output_tokens: int = 0) -> Turn:
    """Parse an assistant message: its first tool call (if any) becomes the action."""
    calls = message.get("tool_calls") or []
    if not calls:
        return Turn(message, None, input_tokens, output_tokens)
    fn = calls[0].get("function", {})
    call = ToolCall(str(fn.get("name", "")), fn.get("arguments", ""), str(calls[0].get("id", "")))
    return Turn(message, call, input_tokens, output_tokens)
