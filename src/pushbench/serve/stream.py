"""serve-sim's ``stream: true`` answer: one finished completion cut into OpenAI stream chunks.

The chunks follow the OpenAI chat-completions stream: a first delta with the role, then each
tool call's id, type and name with empty arguments, then the arguments text in pieces (or the
content text in pieces), then an empty delta carrying ``finish_reason``; with
``stream_options.include_usage`` every chunk has ``usage: null`` and a last chunk with no choices
carries the usage. Joined back together, the pieces are exactly the non-streamed message.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from typing import Any

import orjson

PIECE = 16  # characters of arguments or content per delta


def _pieces(text: str) -> list[str]:
    return [text[i:i + PIECE] for i in range(0, len(text), PIECE)]


def _deltas(message: dict[str, Any]) -> list[dict[str, Any]]:
    calls = message.get("tool_calls") or []
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": None if calls else ""}]
    for index, call in enumerate(calls):
        fn = call.get("function", {})
        deltas.append({"tool_calls": [{"index": index, "id": call.get("id"), "type": "function",
                                       "function": {"name": fn.get("name", ""), "arguments": ""}}]})
        deltas.extend({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}
                      for piece in _pieces(fn.get("arguments", "")))
    if not calls:
        deltas.extend({"content": piece} for piece in _pieces(message.get("content") or ""))
    return deltas


def completion_chunks(data: dict[str, Any], include_usage: bool) -> list[dict[str, Any]]:
    """The ``chat.completion.chunk`` objects of the finished completion ``data``."""
    choice = data["choices"][0]
    head = {"id": data["id"], "object": "chat.completion.chunk", "created": data["created"],
            "model": data["model"], "system_fingerprint": data.get("system_fingerprint")}
    extra = {"usage": None} if include_usage else {}

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {**head, "choices": [{"index": 0, "delta": delta, "logprobs": None,
                                     "finish_reason": finish_reason}], **extra}

    chunks = [chunk(delta) for delta in _deltas(choice["message"])]
    chunks.append(chunk({}, choice["finish_reason"]))
    if include_usage:
        chunks.append({**head, "choices": [], "usage": data["usage"]})
    return chunks


async def sse_events(chunks: Iterable[dict[str, Any]]) -> AsyncIterator[bytes]:
    """Server-sent events: one ``data:`` line per chunk, then ``data: [DONE]``."""
    for item in chunks:
        yield b"data: " + orjson.dumps(item) + b"\n\n"
    yield b"data: [DONE]\n\n"
