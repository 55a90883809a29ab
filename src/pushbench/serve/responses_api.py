"""serve-sim's OpenAI Responses API (``POST /v1/responses``), as Codex CLI speaks it.

A request is translated into the chat message form SimLM reads: ``instructions`` and
``developer``/``system`` messages become system messages, ``user`` messages user messages (their
``input_text``), ``assistant`` messages and ``function_call`` items assistant messages (with
``tool_calls``), ``function_call_output`` items ``tool`` messages; ``reasoning`` items are dropped.
Function tools become chat tools, those inside a ``namespace`` tool named ``<namespace>__<tool>``
(Codex's namespace for an MCP server is ``mcp__<server>``), and a call to one goes back with its
``namespace``; other tool types (web search, shell) are the product's own and are ignored. SimLM's turn comes back as a Response
with one ``message`` or ``function_call`` output item and ``usage``; with ``stream: true`` as
the Responses API's server-sent events (``response.created`` ... ``response.completed``).
Errors keep serve-sim's OpenAI shape.

``previous_response_id`` continues a stored response as the API does: that response's input and
output (and its own predecessors') come before the new input; its ``instructions`` do not carry
over. serve-sim keeps the newest ``Conversations.capacity`` responses in memory (not with
``store: false``); an unknown or forgotten id is a 400 naming it. ``conversation`` objects are
refused.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence
from typing import Any

import orjson

from pushbench.serve.products import text_of
from pushbench.serve.stream import PIECE

ROLES = {"developer": "system", "system": "system", "user": "user", "assistant": "assistant"}


def invalid(body: Any, models: dict[str, str]) -> tuple[str, str] | None:
    """(message, param) saying why SimLM cannot answer this Responses request, or None."""
    if not isinstance(body, dict):
        return "the request body must be a JSON object", ""
    model = body.get("model")
    if not isinstance(model, str) or model not in models:
        return f"The model `{str(model)[:100]}` does not exist; served: {', '.join(models)}", "model"
    items = body.get("input")
    if not (isinstance(items, str) and items) and not (
            isinstance(items, list) and items and all(isinstance(i, dict) for i in items)):
        return "input must be a non-empty string or a non-empty list of input items", "input"
    tools = body.get("tools") or []
    if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
        return "tools must be a list of tool objects", "tools"
    if not isinstance(body.get("instructions") or "", str):
        return "instructions must be a string", "instructions"
    if not isinstance(body.get("stream", False), (bool, type(None))):
        return "stream must be a boolean", "stream"
    previous = body.get("previous_response_id")
    if previous is not None and (not isinstance(previous, str) or not previous):
        return "previous_response_id must be a response id (a string)", "previous_response_id"
    if body.get("conversation") is not None:
        return ("serve-sim keeps no conversation objects; send the whole input, or continue a response with "
                "previous_response_id"), "conversation"
    limit = body.get("max_output_tokens")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 1):
        return "max_output_tokens must be a positive integer", "max_output_tokens"
    return None


def _joined(namespace: str | None, name: str) -> str:
    """A namespaced tool's chat name: Codex puts an MCP server's tools in the namespace
    ``mcp__<server>``, so they read ``mcp__<server>__<tool>`` like Claude Code's."""
    return f"{namespace}__{name}" if namespace else name


def namespaces(tools: list[dict[str, Any]]) -> list[str]:
    return sorted((t["name"] for t in tools if t.get("type") == "namespace" and isinstance(t.get("name"), str)),
                  key=len, reverse=True)


def _split(name: str, spaces: list[str]) -> tuple[str | None, str]:
    for space in spaces:
        if name.startswith(space + "__"):
            return space, name[len(space) + 2:]
    return None, name


def chat_tools(tools: list[dict[str, Any]], namespace: str | None = None) -> list[dict[str, Any]]:
    out = []
    for tool in tools:
        if tool.get("type") == "namespace" and isinstance(tool.get("tools"), list) and not namespace:
            out.extend(chat_tools([t for t in tool["tools"] if isinstance(t, dict)], str(tool.get("name") or "")))
        elif tool.get("type") == "function" and isinstance(tool.get("name"), str):
            out.append({"type": "function", "function": {
                "name": _joined(namespace, tool["name"]), "description": tool.get("description") or "",
                "parameters": tool.get("parameters") or {"type": "object", "properties": {}}}})
    return out


def _output_text(output: Any) -> str:
    return output if isinstance(output, str) else text_of(output)


def chat_messages(body: dict[str, Any], history: Sequence[dict[str, Any]] = ()) -> list[dict[str, Any]]:
    """The request as the chat messages SimLM reads (``history``: the previous responses' turns)."""
    head = [{"role": "system", "content": body["instructions"]}] if body.get("instructions") else []
    return head + list(history) + input_messages(body)


def input_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The request's ``input`` items as chat messages."""
    out: list[dict[str, Any]] = []
    items = body["input"]
    for item in [{"type": "message", "role": "user", "content": items}] if isinstance(items, str) else items:
        kind = item.get("type", "message")
        if kind == "message" and item.get("role") in ROLES:
            out.append({"role": ROLES[item["role"]], "content": text_of(item.get("content"))})
        elif kind == "function_call":
            name = _joined(item.get("namespace") if isinstance(item.get("namespace"), str) else None,
                           str(item.get("name", "")))
            call = {"id": str(item.get("call_id", "")), "type": "function",
                    "function": {"name": name, "arguments": str(item.get("arguments", ""))}}
            if out and out[-1]["role"] == "assistant" and out[-1].get("tool_calls"):
                out[-1] = {**out[-1], "tool_calls": [*out[-1]["tool_calls"], call]}
            else:
                out.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "function_call_output":
            out.append({"role": "tool", "tool_call_id": str(item.get("call_id", "")),
                        "content": _output_text(item.get("output"))})
    return out


class Conversations:
    """Stored responses for ``previous_response_id``: each one's parent, new input and reply."""

    def __init__(self, capacity: int = 4096):
        self.capacity = capacity
        self._items: OrderedDict[str, tuple[str | None, list[dict[str, Any]]]] = OrderedDict()

    def history(self, response_id: str) -> list[dict[str, Any]] | None:
        """The chat turns up to and including ``response_id``'s reply, or None if unknown."""
        chain: list[list[dict[str, Any]]] = []
        current: str | None = response_id
        while current is not None:
            if current not in self._items:
                return None
            parent, turns = self._items[current]
            chain.append(turns)
            current = parent
        return [turn for turns in reversed(chain) for turn in turns]

    def remember(self, response_id: str, body: dict[str, Any], reply: dict[str, Any]) -> None:
        if body.get("store") is False:
            return
        self._items.pop(response_id, None)
        self._items[response_id] = (body.get("previous_response_id"), [*input_messages(body), reply])
        while len(self._items) > self.capacity:
            self._items.popitem(last=False)


def response(data: dict[str, Any], key: str, body: dict[str, Any]) -> dict[str, Any]:
    """SimLM's answer (a chat completion from ``SimServer.answer``) as a Response object."""
    choice = data["choices"][0]
    reply = choice["message"]
    output: list[dict[str, Any]] = []
    spaces = namespaces(body.get("tools") or [])
    for index, call in enumerate(reply.get("tool_calls") or []):
        space, name = _split(call["function"]["name"], spaces)
        output.append({"type": "function_call", "id": f"fc_{key[:20]}_{index}", "call_id": call["id"],
                       "name": name, "arguments": call["function"]["arguments"], "status": "completed",
                       **({"namespace": space} if space else {})})
    if not output:
        output.append({"type": "message", "id": f"msg_{key[:24]}", "role": "assistant", "status": "completed",
                       "content": [{"type": "output_text", "text": reply.get("content") or "", "annotations": []}]})
    cut = choice["finish_reason"] == "length"
    usage = data["usage"]
    return {"id": f"resp_{key[:24]}", "object": "response", "created_at": 0, "model": data["model"],
            "status": "incomplete" if cut else "completed",
            "incomplete_details": {"reason": "max_output_tokens"} if cut else None, "error": None,
            "instructions": body.get("instructions"), "metadata": {}, "output": output,
            "parallel_tool_calls": bool(body.get("parallel_tool_calls", True)),
            "tool_choice": body.get("tool_choice") or "auto", "tools": [], "temperature": None,
            "top_p": None, "max_output_tokens": body.get("max_output_tokens"), "text": {"format": {"type": "text"}},
            "truncation": "disabled",
            "usage": {"input_tokens": usage["prompt_tokens"], "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens": usage["completion_tokens"],
                      "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": usage["total_tokens"]}}


def _pieces(text: str) -> list[str]:
    return [text[i:i + PIECE] for i in range(0, len(text), PIECE)] or [""]


def _item_events(index: int, item: dict[str, Any]) -> list[dict[str, Any]]:
    base = {"output_index": index, "item_id": item["id"]}
    if item["type"] == "function_call":
        events = [{"type": "response.output_item.added", "output_index": index,
                   "item": {**item, "arguments": "", "status": "in_progress"}}]
        events += [{"type": "response.function_call_arguments.delta", **base, "delta": p}
                   for p in _pieces(item["arguments"])]
        events.append({"type": "response.function_call_arguments.done", **base, "name": item["name"],
                       "arguments": item["arguments"]})
    else:
        part = item["content"][0]
        events = [{"type": "response.output_item.added", "output_index": index,
                   "item": {**item, "content": [], "status": "in_progress"}},
                  {"type": "response.content_part.added", **base, "content_index": 0,
                   "part": {**part, "text": ""}}]
        events += [{"type": "response.output_text.delta", **base, "content_index": 0, "delta": p, "logprobs": []}
                   for p in _pieces(part["text"])]
        events += [{"type": "response.output_text.done", **base, "content_index": 0, "text": part["text"],
                    "logprobs": []},
                   {"type": "response.content_part.done", **base, "content_index": 0, "part": part}]
    events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    return events


def stream_events(resp: dict[str, Any]) -> list[dict[str, Any]]:
    """The Responses API stream of a finished Response; the last event carries it whole."""
    pending = {**resp, "status": "in_progress", "output": [], "usage": None, "incomplete_details": None}
    events = [{"type": "response.created", "response": pending},
              {"type": "response.in_progress", "response": pending}]
    for index, item in enumerate(resp["output"]):
        events.extend(_item_events(index, item))
    final = "response.incomplete" if resp["status"] == "incomplete" else "response.completed"
    events.append({"type": final, "response": resp})
    return [{**event, "sequence_number": n} for n, event in enumerate(events)]


async def sse(events: list[dict[str, Any]]) -> AsyncIterator[bytes]:
    for event in events:
        yield b"event: " + event["type"].encode() + b"\ndata: " + orjson.dumps(event) + b"\n\n"
