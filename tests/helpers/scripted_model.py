"""A scripted model endpoint for the agent-product tests: ``python scripted_model.py PORT CALLS_JSON``.

It speaks serve-sim's chat-completions, Anthropic Messages, OpenAI Responses and Gemini APIs (the
same translation modules) but answers from a script instead of SimLM: the n-th request whose
history holds n-1 tool results gets the n-th call of ``CALLS_JSON`` (``[[tool, {args}], ...]``,
tools by bare name, sent under the product's MCP name), then a text reply; a request without
the task's tools (a title request) gets a text reply. Used to make a real product send hostile
arguments to the MCP server.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import orjson
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import Response, StreamingResponse

from pushbench.serve import anthropic_api
from pushbench.serve import gemini_api
from pushbench.serve import responses_api
from pushbench.serve.products import merge_user_turns, task_view
from pushbench.serve.stream import completion_chunks, sse_events


def completion(messages: list[dict[str, Any]], tools: list[dict[str, Any]], script: list) -> dict[str, Any]:
    done = sum(1 for m in messages if m.get("role") == "tool")
    view = task_view(tools)
    message: dict[str, Any] = {"role": "assistant", "content": "Done."}
    if view is not None and done < len(script):
        name, args = script[done]
        message = {"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call_{done}", "type": "function",
             "function": {"name": view.product_names[name], "arguments": json.dumps(args)}}]}
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return {"id": "chatcmpl-scripted", "object": "chat.completion", "created": 0, "model": "sim-base",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


def build(script: list) -> FastAPI:
    app = FastAPI()

    @app.get("/v1/models")
    async def models() -> Response:
        return Response(b'{"object": "list", "data": []}', media_type="application/json")

    @app.get("/sim/stats")
    async def stats() -> Response:
        return Response(b"{}", media_type="application/json")

    @app.post("/v1/messages")
    async def messages(request: Request) -> Response:
        body = orjson.loads(await request.body())
        data = completion(anthropic_api.chat_messages(body), anthropic_api.chat_tools(body.get("tools") or []), script)
        msg = anthropic_api.message(data, "scripted" * 4)
        if body.get("stream"):
            return StreamingResponse(anthropic_api.sse(anthropic_api.stream_events(msg)), media_type="text/event-stream")
        return Response(orjson.dumps(msg), media_type="application/json")

    @app.post("/v1/responses")
    async def responses(request: Request) -> Response:
        body = orjson.loads(await request.body())
        data = completion(responses_api.chat_messages(body), responses_api.chat_tools(body.get("tools") or []), script)
        resp = responses_api.response(data, "scripted" * 4, body)
        if body.get("stream"):
            return StreamingResponse(responses_api.sse(responses_api.stream_events(resp)), media_type="text/event-stream")
        return Response(orjson.dumps(resp), media_type="application/json")

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Response:
        body = orjson.loads(await request.body())
        data = completion(merge_user_turns(body["messages"]), body.get("tools") or [], script)
        if body.get("stream"):
            return StreamingResponse(sse_events(completion_chunks(data, True)), media_type="text/event-stream")
        return Response(orjson.dumps(data), media_type="application/json")

    @app.post("/v1beta/models/{target}")
    async def gemini(target: str, request: Request) -> Response:
        body = orjson.loads(await request.body())
        data = completion(gemini_api.chat_messages(body), gemini_api.chat_tools(body.get("tools") or []), script)
        resp = gemini_api.response(data, "scripted" * 4)
        if target.endswith(":streamGenerateContent"):
            return StreamingResponse(gemini_api.sse(gemini_api.stream_chunks(resp)), media_type="text/event-stream")
        return Response(orjson.dumps(resp), media_type="application/json")

    return app


if __name__ == "__main__":
    uvicorn.run(build(json.loads(sys.argv[2])), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
