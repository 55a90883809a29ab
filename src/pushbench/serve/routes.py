"""serve-sim's routes for the agent products: ``/v1/messages`` (Anthropic) and ``/v1/responses`` (OpenAI).

Both translate the request into chat messages (``serve_sim_anthropic`` / ``serve_sim_responses``),
let ``SimServer.answer`` answer as SimLM inside a product would, and translate the
answer back, whole or streamed. Transport faults are drawn as for chat completions, each in its
API's error shape (Anthropic's overload is 529). Malformed tool-call JSON is not injected here:
both APIs' clients parse the arguments themselves, so the products' own recovery is what runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import orjson
from fastapi import FastAPI, Request
from fastapi.responses import Response, StreamingResponse

from pushbench.serve import anthropic_api
from pushbench.serve import responses_api
from pushbench.serve.transport import _bad, _error, request_hash
from pushbench.serve.products import text_of

SimServer = Any  # pushbench.serve.app.SimServer (not imported: serve_sim imports this module)

ANTHROPIC_PREFIX = "/v1/messages"
SSE_HEADERS = {"cache-control": "no-cache"}


async def _body(request: Request) -> tuple[Any, bool]:
    try:
        return orjson.loads(await request.body()), True
    except orjson.JSONDecodeError:
        return None, False


def openai_error(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    return _error(status, message, "rate_limit_error" if status == 429 else "server_error", headers=headers)


async def fault_response(server: SimServer, key: str, shape: Callable[..., Response] = openai_error,
                         overload: int = 500) -> Response | None:
    """A seeded transport fault for this request, in its API's error ``shape`` (``overload`` is
    the API's status for a server error: Anthropic's 529, Gemini's 503), or None."""
    fault = server.fault(key)
    if fault is None:
        return None
    server.stats[f"fault_{fault}"] += 1
    wait = server.config.retry_after
    headers = {"retry-after": str(max(0, round(wait))), "retry-after-ms": str(int(wait * 1000))}
    if fault == "timeout":
        await asyncio.sleep(server.config.fault_delay)  # the client should have timed out by now
    status = {"rate_limit": 429, "server_error": overload, "timeout": 504}[fault]
    return shape(status, f"simulated {fault.replace('_', ' ')}", headers if status == 429 else None)


def register(app: FastAPI, server: SimServer, models: dict[str, str]) -> None:
    conversations = responses_api.Conversations()

    @app.post("/v1/messages")
    async def messages(request: Request) -> Response:  # Claude Code adds ?beta=true
        server.stats["requests"] += 1
        body, ok = await _body(request)
        problem = anthropic_api.invalid(body, models) if ok else "the request body is not valid JSON"
        if problem is not None:
            server.stats["rejected"] += 1
            return anthropic_api.error(404 if problem.startswith("model:") else 400, problem)
        key = request_hash(body)
        if (fault := await fault_response(server, key, anthropic_api.error, 529)) is not None:
            return fault
        data = server.answer(body["model"], anthropic_api.chat_messages(body),
                                         anthropic_api.chat_tools(body.get("tools") or []), key, body["max_tokens"])
        msg = anthropic_api.message(data, key)
        server.stats["messages"] += 1
        if body.get("stream"):
            return StreamingResponse(anthropic_api.sse(anthropic_api.stream_events(msg)),
                                     media_type="text/event-stream", headers=SSE_HEADERS)
        return Response(orjson.dumps(msg), media_type="application/json")

    @app.post("/v1/messages/count_tokens")
    async def count_tokens(request: Request) -> Response:
        from pushbench.tokens import count_tokens as count

        body, ok = await _body(request)
        if not ok or not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return anthropic_api.error(400, "messages: a list of messages is required")
        text = text_of(body.get("system")) + orjson.dumps(body["messages"]).decode()
        return Response(orjson.dumps({"input_tokens": count(text)}), media_type="application/json")

    @app.post("/v1/responses")
    async def responses(request: Request) -> Response:
        server.stats["requests"] += 1
        body, ok = await _body(request)
        if not ok:
            return _error(400, "the request body is not valid JSON", "invalid_request_error")
        if (problem := responses_api.invalid(body, models)) is not None:
            server.stats["rejected"] += 1
            message, param = problem
            code = "model_not_found" if param == "model" else None
            return _bad(message, param, code) if param else _error(400, message, "invalid_request_error")
        history: list[dict[str, Any]] = []
        if body.get("previous_response_id") is not None:
            found = conversations.history(body["previous_response_id"])
            if found is None:
                server.stats["rejected"] += 1
                return _bad(f"Previous response with id '{body['previous_response_id'][:100]}' not found (serve-sim "
                            f"keeps the newest {conversations.capacity} stored responses in memory).",
                            "previous_response_id", "previous_response_not_found")
            history = found
        key = request_hash(body)
        if (fault := await fault_response(server, key)) is not None:
            return fault
        data = server.answer(body["model"], responses_api.chat_messages(body, history),
                             responses_api.chat_tools(body.get("tools") or []), key, body.get("max_output_tokens"))
        resp = responses_api.response(data, key, body)
        conversations.remember(resp["id"], body, data["choices"][0]["message"])
        server.stats["responses"] += 1
        if body.get("stream"):
            return StreamingResponse(responses_api.sse(responses_api.stream_events(resp)),
                                     media_type="text/event-stream", headers=SSE_HEADERS)
        return Response(orjson.dumps(resp), media_type="application/json")
