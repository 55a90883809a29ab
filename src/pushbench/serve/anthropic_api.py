"""serve-sim's Anthropic Messages API (``POST /v1/messages``), as Claude Code speaks it.

A request is translated into the chat message form SimLM reads: ``system`` (a string or text
blocks) and system messages become system messages; a user message's ``tool_result`` blocks become ``tool``
messages (their text, as the product sends it) followed by its text blocks; an assistant
message's ``text`` and ``tool_use`` blocks become one assistant message with ``tool_calls``;
``thinking`` blocks are dropped. Tools (``name``, ``description``, ``input_schema``) become chat
tools. SimLM's turn comes back as a Message with ``text`` or ``tool_use`` blocks, a
``stop_reason`` (``end_turn``, ``tool_use``, ``max_tokens``) and ``usage``; with ``stream: true``
as the Messages API's server-sent events. Errors have Anthropic's shape
``{"type": "error", "error": {"type", "message"}}``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import orjson
from fastapi.responses import Response

from pushbench.serve.products import text_of
from pushbench.serve.stream import PIECE

ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error",
               405: "invalid_request_error", 413: "request_too_large", 429: "rate_limit_error",
               500: "api_error", 504: "api_error", 529: "overloaded_error"}


ROLES = ("user", "assistant", "system")  # Claude Code 2.1 sends its environment as a system message


def error(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    body = {"type": "error", "error": {"type": ERROR_TYPES.get(status, "api_error"), "message": message}}
    return Response(orjson.dumps(body), status_code=status, media_type="application/json", headers=headers)


def invalid(body: Any, models: dict[str, str]) -> str | None:
    """Why SimLM cannot answer this Messages request, or None."""
    if not isinstance(body, dict):
        return "the request body must be a JSON object"
    model = body.get("model")
    if not isinstance(model, str) or model not in models:
        return f"model: `{str(model)[:100]}` is not served; served: {', '.join(models)}"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages or not all(
            isinstance(m, dict) and m.get("role") in ROLES for m in messages):
        return "messages: must be a non-empty list of user, assistant or system messages"
    limit = body.get("max_tokens")
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        return "max_tokens: a positive integer is required"
    tools = body.get("tools") or []
    if not isinstance(tools, list) or not all(isinstance(t, dict) and isinstance(t.get("name"), str) for t in tools):
        return "tools: must be a list of tools with a name"
    if not isinstance(body.get("system", ""), (str, list)):
        return "system: must be a string or a list of text blocks"
    if not isinstance(body.get("stream", False), (bool, type(None))):
        return "stream: must be a boolean"
    return None


def chat_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Client tools as chat tools (server tools such as web search have no input schema)."""
    return [{"type": "function", "function": {"name": t["name"], "description": t.get("description") or "",
                                              "parameters": t["input_schema"]}}
            for t in tools if isinstance(t.get("input_schema"), dict)]


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def chat_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The request as the chat messages SimLM reads."""
    out: list[dict[str, Any]] = []
    system = text_of(body.get("system"))
    if system:
        out.append({"role": "system", "content": system})
    for message in body["messages"]:
        blocks = _blocks(message.get("content"))
        texts = [b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)]
        if message["role"] == "system":
            out.append({"role": "system", "content": "\n".join(texts)})
            continue
        if message["role"] == "assistant":
            calls = [{"id": str(b.get("id", "")), "type": "function",
                      "function": {"name": str(b.get("name", "")),
                                   "arguments": json.dumps(b.get("input") or {}, sort_keys=True)}}
                     for b in blocks if b.get("type") == "tool_use"]
            reply: dict[str, Any] = {"role": "assistant", "content": "\n".join(texts) or None}
            if calls:
                reply["tool_calls"] = calls
            out.append(reply)
            continue
        for block in blocks:
            if block.get("type") == "tool_result":
                out.append({"role": "tool", "tool_call_id": str(block.get("tool_use_id", "")),
                            "content": text_of(block.get("content"))})
        if texts:
            out.append({"role": "user", "content": "\n".join(texts)})
    return out


def message(data: dict[str, Any], key: str) -> dict[str, Any]:
    """SimLM's answer (a chat completion from ``SimServer.answer``) as an Anthropic Message."""
    choice = data["choices"][0]
    reply = choice["message"]
    content: list[dict[str, Any]] = []
    if reply.get("content"):
        content.append({"type": "text", "text": reply["content"]})
    for call in reply.get("tool_calls") or []:
        try:
            args = json.loads(call["function"]["arguments"] or "{}")
        except json.JSONDecodeError:
            args = None  # a reply cut at max_tokens: the tool input is incomplete
        content.append({"type": "tool_use", "id": call["id"], "name": call["function"]["name"],
                        "input": args if isinstance(args, dict) else {}})
    stop = {"tool_calls": "tool_use", "length": "max_tokens"}.get(choice["finish_reason"], "end_turn")
    usage = data["usage"]
    return {"id": f"msg_{key[:24]}", "type": "message", "role": "assistant", "model": data["model"],
            "content": content, "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": usage["prompt_tokens"], "output_tokens": usage["completion_tokens"],
                      "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}


def _pieces(text: str) -> list[str]:
    return [text[i:i + PIECE] for i in range(0, len(text), PIECE)] or [""]


def stream_events(msg: dict[str, Any]) -> list[dict[str, Any]]:
    """The Messages API stream of a finished Message: joined, the deltas are exactly ``msg``."""
    usage = msg["usage"]
    head = {**msg, "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {**usage, "output_tokens": 0}}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": head}]
    start: dict[str, Any]
    for index, block in enumerate(msg["content"]):
        if block["type"] == "text":
            start, deltas = {"type": "text", "text": ""}, [
                {"type": "text_delta", "text": p} for p in _pieces(block["text"])]
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": p}
                      for p in _pieces(json.dumps(block["input"], sort_keys=True))]
        events.append({"type": "content_block_start", "index": index, "content_block": start})
        events.extend({"type": "content_block_delta", "index": index, "delta": d} for d in deltas)
        events.append({"type": "content_block_stop", "index": index})
    events.append({"type": "message_delta", "delta": {"stop_reason": msg["stop_reason"], "stop_sequence": None},
                   "usage": {"output_tokens": usage["output_tokens"]}})
    events.append({"type": "message_stop"})
    return events


async def sse(events: list[dict[str, Any]]) -> AsyncIterator[bytes]:
    for event in events:
        yield b"event: " + event["type"].encode() + b"\ndata: " + orjson.dumps(event) + b"\n\n"
