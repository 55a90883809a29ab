"""serve-sim's Gemini API (``POST /v1beta/models/<model>:generateContent`` and
``:streamGenerateContent``), as Gemini CLI and the ``google-genai`` SDK speak it.

A request is translated into the chat message form SimLM reads: ``systemInstruction`` becomes a
system message; a ``model`` content's text parts (thought parts dropped) and ``functionCall``
parts one assistant message with ``tool_calls``; a ``user`` content's ``functionResponse`` parts
``tool`` messages (each answering the earliest open call of its name), then its text parts a user
message. A call without an ``id`` gets one from its position, so a later request names it the
same way. ``functionDeclarations`` (``parameters`` or ``parametersJsonSchema``; the API's
upper-case type names read as JSON Schema's) become chat tools. SimLM's turn comes back as a
``GenerateContentResponse`` (one candidate with ``text`` or ``functionCall`` parts, a
``finishReason`` of ``STOP`` or ``MAX_TOKENS``, ``usageMetadata``); streamed as server-sent events
with ``?alt=sse`` (text in pieces, the last chunk with the finish reason and usage), else as a
JSON array of the same chunks. Errors have Google's shape ``{"error": {"code", "message",
"status"}}``. Request fields are read in camelCase or snake_case, as the API accepts both.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import orjson
from fastapi import FastAPI, Request
from fastapi.responses import Response, StreamingResponse

from pushbench.serve.transport import request_hash
from pushbench.serve.products import text_of
from pushbench.serve.stream import PIECE

SimServer = Any  # pushbench.serve.app.SimServer (not imported: serve_sim imports this module)

PATHS = ("/v1beta/models/", "/v1/models/")
METHODS = ("generateContent", "streamGenerateContent", "countTokens")
STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
          405: "INVALID_ARGUMENT", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE",
          504: "DEADLINE_EXCEEDED"}


def is_gemini_path(path: str) -> bool:
    return path.startswith("/v1beta/") or (path.startswith("/v1/models/") and ":" in path)


def error(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    body = {"error": {"code": status, "message": message, "status": STATUS.get(status, "UNKNOWN")}}
    return Response(orjson.dumps(body), status_code=status, media_type="application/json", headers=headers)


def _get(data: dict[str, Any], camel: str) -> Any:
    """A field by its camelCase name, or by its snake_case one."""
    if camel in data:
        return data[camel]
    return data.get("".join(f"_{c.lower()}" if c.isupper() else c for c in camel))


def invalid(body: Any, model: str, models: dict[str, str]) -> tuple[int, str] | None:
    """(status, message) saying why SimLM cannot answer this request, or None."""
    if model not in models:
        return 404, f"models/{model[:100]} is not found; served: {', '.join(models)}"
    if not isinstance(body, dict):
        return 400, "the request body must be a JSON object"
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents or not all(
            isinstance(c, dict) and isinstance(c.get("parts"), list) for c in contents):
        return 400, "contents must be a non-empty list of contents, each with a list of parts"
    tools = body.get("tools") or []
    if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
        return 400, "tools must be a list of tool objects"
    for tool in tools:
        declarations = _get(tool, "functionDeclarations") or []
        if not isinstance(declarations, list) or not all(
                isinstance(d, dict) and isinstance(d.get("name"), str) for d in declarations):
            return 400, "functionDeclarations must be a list of declarations with a name"
    limit = _get(_get(body, "generationConfig") or {}, "maxOutputTokens")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 1):
        return 400, "generationConfig.maxOutputTokens must be a positive integer"
    return None


def _json_schema(schema: Any) -> Any:
    """The API's schema (``"type": "OBJECT"``) as JSON Schema (``"object"``)."""
    if isinstance(schema, dict):
        return {k: (v.lower() if k == "type" and isinstance(v, str) else _json_schema(v)) for k, v in schema.items()}
    if isinstance(schema, list):
        return [_json_schema(v) for v in schema]
    return schema


def chat_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for tool in tools:
        for fn in _get(tool, "functionDeclarations") or []:
            params = _get(fn, "parametersJsonSchema") or fn.get("parameters") or {"type": "object", "properties": {}}
            out.append({"type": "function", "function": {
                "name": fn["name"], "description": fn.get("description") or "", "parameters": _json_schema(params)}})
    return out


def _response_text(response: Any) -> str:
    """A ``functionResponse``'s ``response`` as the tool result's text: the one string it holds
    (``{"output": ...}``), the text of MCP ``content`` blocks, else its JSON."""
    if isinstance(response, dict):
        values = list(response.values())
        if len(values) == 1 and isinstance(values[0], str):
            return values[0]
        if isinstance(response.get("content"), list) and text_of(response["content"]):
            return text_of(response["content"])
    return response if isinstance(response, str) else json.dumps(response, sort_keys=True, default=str)


def _parts(content: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in content.get("parts") or [] if isinstance(p, dict)]


def chat_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The request as the chat messages SimLM reads."""
    out: list[dict[str, Any]] = []
    system = _get(body, "systemInstruction")
    text = text_of(_parts(system)) if isinstance(system, dict) else (system if isinstance(system, str) else "")
    if text:
        out.append({"role": "system", "content": text})
    open_calls: list[tuple[str, str]] = []  # (name, id) of calls not yet answered
    for index, content in enumerate(body["contents"]):
        parts = _parts(content)
        texts = "\n".join(p["text"] for p in parts if isinstance(p.get("text"), str) and not p.get("thought"))
        if content.get("role") == "model":
            calls = []
            for n, call in enumerate(c for c in (_get(p, "functionCall") for p in parts) if isinstance(c, dict)):
                call_id = str(call.get("id") or f"call_{index}_{n}")
                calls.append({"id": call_id, "type": "function", "function": {
                    "name": str(call.get("name", "")), "arguments": json.dumps(call.get("args") or {}, sort_keys=True)}})
                open_calls.append((str(call.get("name", "")), call_id))
            reply: dict[str, Any] = {"role": "assistant", "content": texts or None}
            out.append({**reply, "tool_calls": calls} if calls else reply)
            continue
        for n, result in enumerate(r for r in (_get(p, "functionResponse") for p in parts) if isinstance(r, dict)):
            call_id = result.get("id") or next((i for name, i in open_calls if name == result.get("name")),
                                               f"result_{index}_{n}")
            open_calls = [(name, i) for name, i in open_calls if i != call_id]
            out.append({"role": "tool", "tool_call_id": str(call_id),
                        "content": _response_text(result.get("response"))})
        if texts:
            out.append({"role": "user", "content": texts})
    return out


def response(data: dict[str, Any], key: str) -> dict[str, Any]:
    """SimLM's answer (a chat completion from ``SimServer.answer``) as a GenerateContentResponse."""
    choice = data["choices"][0]
    reply = choice["message"]
    parts: list[dict[str, Any]] = []
    if reply.get("content"):
        parts.append({"text": reply["content"]})
    for call in reply.get("tool_calls") or []:
        try:
            args = json.loads(call["function"]["arguments"] or "{}")
        except json.JSONDecodeError:
            args = None  # a reply cut at maxOutputTokens: the arguments are incomplete
        args = args if isinstance(args, dict) else {}
        parts.append({"functionCall": {"name": call["function"]["name"], "args": args}})
    usage = data["usage"]
    return {"candidates": [{"content": {"role": "model", "parts": parts},
                            "finishReason": "MAX_TOKENS" if choice["finish_reason"] == "length" else "STOP",
                            "index": 0}],
            "usageMetadata": {"promptTokenCount": usage["prompt_tokens"],
                              "candidatesTokenCount": usage["completion_tokens"],
                              "totalTokenCount": usage["total_tokens"]},
            "modelVersion": data["model"], "responseId": key[:24]}


def stream_chunks(resp: dict[str, Any]) -> list[dict[str, Any]]:
    """The streamed form: text in pieces, function calls whole; the last chunk finishes."""
    candidate = resp["candidates"][0]
    parts = candidate["content"]["parts"]
    text = "".join(p.get("text", "") for p in parts)
    calls = [p for p in parts if "functionCall" in p]
    pieces = [text[i:i + PIECE] for i in range(0, len(text), PIECE)]
    head = {k: v for k, v in resp.items() if k not in ("candidates", "usageMetadata")}
    chunks = [{"candidates": [{"content": {"role": "model", "parts": [{"text": p}]}, "index": 0}], **head}
              for p in (pieces if calls else pieces[:-1])]
    last = [*([] if calls or not pieces else [{"text": pieces[-1]}]), *calls]
    chunks.append({"candidates": [{**candidate, "content": {"role": "model", "parts": last}}],
                   "usageMetadata": resp["usageMetadata"], **head})
    return chunks


async def sse(chunks: list[dict[str, Any]]) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield b"data: " + orjson.dumps(chunk) + b"\r\n\r\n"


def register(app: FastAPI, server: SimServer, models: dict[str, str]) -> None:
    from pushbench.serve.routes import SSE_HEADERS, fault_response
    from pushbench.tokens import count_tokens

    async def generate(target: str, request: Request) -> Response:
        model, _, method = target.partition(":")
        if method not in METHODS:
            return error(404, f"unknown method {method[:100]!r}; served: {', '.join(METHODS)}")
        server.stats["requests"] += 1
        try:
            body = orjson.loads(await request.body())
        except orjson.JSONDecodeError:
            return error(400, "the request body is not valid JSON")
        if (problem := invalid(body, model, models)) is not None:
            server.stats["rejected"] += 1
            return error(*problem)
        if method == "countTokens":
            return Response(orjson.dumps({"totalTokens": count_tokens(orjson.dumps(chat_messages(body)).decode())}),
                            media_type="application/json")
        key = request_hash({**body, "model": model})
        if (fault := await fault_response(server, key, error, overload=503)) is not None:
            return fault
        limit = _get(_get(body, "generationConfig") or {}, "maxOutputTokens")
        data = server.answer(model, chat_messages(body), chat_tools(body.get("tools") or []), key, limit)
        resp = response(data, key)
        server.stats["gemini"] += 1
        if method == "generateContent":
            return Response(orjson.dumps(resp), media_type="application/json")
        if request.query_params.get("alt") == "sse":
            return StreamingResponse(sse(stream_chunks(resp)), media_type="text/event-stream", headers=SSE_HEADERS)
        return Response(orjson.dumps(stream_chunks(resp)), media_type="application/json")

    for prefix in PATHS:
        app.post(prefix + "{target}")(generate)
