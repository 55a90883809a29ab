"""``pushbench serve-sim``: SimLM behind an OpenAI-compatible HTTP endpoint, with seeded faults.

``POST /v1/chat/completions`` answers in the OpenAI format (``choices[0].message.tool_calls``,
``finish_reason``, ``usage``) for the models ``sim-mini``, ``sim-base``, ``sim-pro`` and
``sim-perfect``; ``GET /v1/models`` lists them; ``GET /sim/stats`` counts what was served. With
``stream: true`` the same answer comes as server-sent events of ``chat.completion.chunk`` deltas
(``stream_options.include_usage`` adds the final usage chunk), as the OpenAI API streams. Every
error, an unknown path or method included, has the OpenAI shape ``{"error": {"message", "type",
"param", "code"}}``. The answers are SimLM's, so they depend only on the messages, the tools and
the request seed: the real ``openai`` client path (schemas, parsing, retries, token accounting)
runs end to end without any external service. **Every answer comes from SimLM, not from a real
model.**

A chat-completions request whose tools a SimLM mind reads as they are goes to SimLM unchanged
(the in-process path); one whose tools are an agent product's goes through product mode
(``serve_sim_product``), as on the Messages, Responses and Gemini routes (``serve_sim_routes``,
``serve_sim_gemini``). On every route a request whose last tool result says the episode has
ended gets a text reply, and a request with no tools a text reply (a memory's summary request
still goes to SimLM).

Faults are decided from (server seed, request hash, attempt): a fraction ``fault_rate`` of attempts
gets a transport fault (429 with Retry-After, 500, or a stall of ``fault_delay`` seconds, meant to
outlast the client's timeout), at most ``MAX_FAULTS_PER_REQUEST`` times in a row for one request, so
retries always succeed; a fraction ``malformed_rate`` of requests gets a tool call whose JSON
arguments are cut short (the same request always gets the same answer).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections import Counter, OrderedDict
from dataclasses import dataclass
from typing import Any

import orjson
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response, StreamingResponse
from starlette.exceptions import HTTPException

from pushbench.policies.base import Turn
from pushbench.policies.sim import SimLM
from pushbench.serve import gemini_api
from pushbench.policies.sim.memory_skills import is_summary_request
from pushbench.serve.anthropic_api import error as anthropic_error
from pushbench.serve.transport import TRANSPORT_KEYS, _bad, _error, request_hash  # noqa: F401 (re-exported)
from pushbench.serve.products import (ENDED_REPLY, NO_TOOLS_REPLY, episode_ended, merge_user_turns, readable,
                                         task_view, text_turn, to_bare, to_product)
from pushbench.serve.routes import ANTHROPIC_PREFIX
from pushbench.serve.routes import register as register_product_routes
from pushbench.serve.stream import completion_chunks, sse_events

MODELS = {"sim-mini": "mini", "sim-base": "base", "sim-pro": "pro", "sim-perfect": "perfect"}
MAX_FAULTS_PER_REQUEST = 3
FAULT_KINDS = ("rate_limit", "server_error", "timeout")


@dataclass(frozen=True)
class ServeConfig:
    fault_rate: float = 0.0
    malformed_rate: float = 0.0
    fault_delay: float = 5.0  # seconds a "timeout" fault stalls before answering 504
    retry_after: float = 1.0  # seconds a 429 asks the client to wait
    seed: int = 0
    policy_seed: int = 0  # SimLM's request seed for agent products, which send none
    tool_prefixes: tuple[str, ...] = ()  # a product's declared MCP tool prefix(es); () = every candidate

    def __post_init__(self) -> None:
        for name in ("fault_rate", "malformed_rate"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name.replace('_', '-')} must be between 0 and 1, got {getattr(self, name)}")
        for name in ("fault_delay", "retry_after"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name.replace('_', '-')} must be >= 0, got {getattr(self, name)}")


def unit(*parts: Any) -> float:
    """A deterministic draw in [0, 1) from the given parts."""
    digest = hashlib.sha256(":".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


class SimPool:
    """One SimLM per conversation, so interleaved episodes never make SimLM re-read a context.

    A request continues the conversation whose last request is a prefix of its messages;
    otherwise (a new episode, or a context trimmed by the memory) it starts a fresh SimLM. SimLM's
    answer depends only on the messages and seed either way; this is for speed.
    """

    def __init__(self, capacity: int = 256):
        self.capacity = capacity
        self._slots: OrderedDict[int, tuple[tuple[Any, ...], SimLM, list[dict[str, Any]]]] = OrderedDict()
        self._next = 0

    def act(self, profile: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]], seed: int) -> Turn:
        if is_summary_request(messages, tools):  # a memory's own request: answered as the episode's SimLM
            return self._summary(profile, messages, seed)
        group = (profile, seed, json.dumps(messages[:2], sort_keys=True, default=str))
        found, best = None, -1
        for slot, (g, _, last) in self._slots.items():
            if g == group and best < len(last) <= len(messages) and messages[: len(last)] == last:
                found, best = slot, len(last)
        if found is None:
            found, sim = self._next, SimLM(profile)
            self._next += 1
        else:
            sim = self._slots.pop(found)[1]
        turn = sim.act(messages, tools, seed)
        self._slots[found] = (group, sim, messages)
        while len(self._slots) > self.capacity:
            self._slots.popitem(last=False)
        return turn

    def _summary(self, profile: str, messages: list[dict[str, Any]], seed: int) -> Turn:
        """In process, a memory's summary request goes to the SimLM of its episode, which writes the
        summary with the reader of the task it has been playing at that seed; here that is the
        latest conversation of the same profile and seed (a fresh SimLM when there is none)."""
        sim = next((s for g, s, _ in reversed(self._slots.values()) if g[:2] == (profile, seed)), None)
        return (sim or SimLM(profile)).act(messages, [], seed)


class SimServer:
    def __init__(self, config: ServeConfig):
        self.config = config
        self.pool = SimPool()
        self.attempts: Counter[str] = Counter()
        self.stats: Counter[str] = Counter()

    def fault(self, key: str) -> str | None:
        attempt = self.attempts[key]
        self.attempts[key] += 1
        cfg = self.config
        if attempt >= MAX_FAULTS_PER_REQUEST or unit(cfg.seed, "fault", key, attempt) >= cfg.fault_rate:
            return None
        return FAULT_KINDS[int(unit(cfg.seed, "kind", key, attempt) * len(FAULT_KINDS))]

    def malformed(self, key: str) -> bool:
        return unit(self.config.seed, "malformed", key) < self.config.malformed_rate

    def completion(self, body: dict[str, Any], key: str) -> dict[str, Any]:
        """A chat-completions request: SimLM on the tools as sent when a mind reads them (the
        in-process path, byte for byte), else on the task's tools among a product's (product mode)."""
        tools, seed = body.get("tools") or [], body.get("seed")
        seed = self.config.policy_seed if seed is None else int(seed)
        messages = body["messages"]
        if tools and not readable(tools):
            return self.answer(body["model"], messages, tools, key, body.get("max_tokens"), seed, malformed=True,
                               unknown_tools_error=True)
        if tools and episode_ended(messages):
            return self._text(messages, ENDED_REPLY, "ended", body["model"], key, body.get("max_tokens"))
        try:
            turn = self.pool.act(MODELS[body["model"]], messages, tools, seed)
        except ValueError:  # no tools and no memory's summary request: a plain text reply
            return self._text(messages, NO_TOOLS_REPLY, "text_only", body["model"], key, body.get("max_tokens"))
        return self._completion(turn, body["model"], key, body.get("max_tokens"), malformed=True)

    def answer(self, model: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]], key: str,
               max_tokens: Any, seed: int | None = None, malformed: bool = False,
               unknown_tools_error: bool = False) -> dict[str, Any]:
        """An agent product's request (its own prompt and tools, MCP tools under its names): SimLM
        answers on the task's tools, in plain text when the episode has ended or none of the tools
        is a task's (a ``ValueError`` instead with ``unknown_tools_error`` and tools sent)."""
        messages = merge_user_turns(messages)
        view = task_view(tools, self.config.tool_prefixes)
        if view is None and tools and unknown_tools_error:
            names = sorted(str((t.get("function") or {}).get("name")) for t in tools)
            raise ValueError(f"SimLM has no reader for a task with tools {names}")
        if view is None or episode_ended(messages):
            return self._text(messages, NO_TOOLS_REPLY if view is None else ENDED_REPLY,
                              "text_only" if view is None else "ended", model, key, max_tokens)
        seed = self.config.policy_seed if seed is None else seed
        turn = self.pool.act(MODELS[model], to_bare(messages, view), view.tools, seed)
        turn = Turn(to_product(turn.message, view), turn.call, turn.input_tokens, turn.output_tokens)
        return self._completion(turn, model, key, max_tokens, malformed=malformed)

    def _text(self, messages: list[dict[str, Any]], text: str, reason: str, model: str, key: str,
              max_tokens: Any) -> dict[str, Any]:
        self.stats[reason] += 1
        return self._completion(text_turn(messages, text), model, key, max_tokens, malformed=False)

    def _completion(self, turn: Turn, model: str, key: str, limit: Any, malformed: bool) -> dict[str, Any]:
        message = dict(turn.message)
        if malformed and message.get("tool_calls") and self.malformed(key):
            call = message["tool_calls"][0]
            args = call["function"]["arguments"]
            broken = {**call, "function": {**call["function"], "arguments": args[:-1] if len(args) > 1 else "{"}}
            message["tool_calls"] = [broken, *message["tool_calls"][1:]]
            self.stats["malformed"] += 1
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        tokens_out = turn.output_tokens
        if isinstance(limit, int) and 0 < limit < tokens_out:
            message, finish, tokens_out = _cut(message, limit / tokens_out), "length", limit
            self.stats["length_cuts"] += 1
        self.stats["completions"] += 1
        self.stats["input_tokens"] += turn.input_tokens
        self.stats["output_tokens"] += tokens_out
        return {"id": f"chatcmpl-{key[:24]}", "object": "chat.completion", "created": 0, "model": model,
                "system_fingerprint": "simlm",
                "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
                "usage": {"prompt_tokens": turn.input_tokens, "completion_tokens": tokens_out,
                          "total_tokens": turn.input_tokens + tokens_out}}


def _cut(message: dict[str, Any], keep: float) -> dict[str, Any]:
    """The reply a server stops at ``max_tokens``: the same fraction of its text, cut short."""
    calls = message.get("tool_calls") or []
    if not calls:
        text = message.get("content") or ""
        return {**message, "content": text[: int(len(text) * keep)]}
    fn = calls[0]["function"]
    first = {**calls[0], "function": {**fn, "arguments": fn["arguments"][: int(len(fn["arguments"]) * keep)]}}
    return {**message, "tool_calls": [first]}


def _invalid(body: Any) -> Response | None:
    """An OpenAI-style error for a request SimLM cannot answer, or None."""
    if not isinstance(body, dict):
        return _error(400, "the request body must be a JSON object", "invalid_request_error")
    model = body.get("model")
    if "model" not in body:
        return _bad("you must provide a model parameter", "model", "missing_required_parameter")
    if not isinstance(model, str) or model not in MODELS:
        return _bad(f"The model `{str(model)[:100]}` does not exist; served: {', '.join(MODELS)}", "model",
                    "model_not_found")
    messages, tools = body.get("messages"), body.get("tools") or []
    if not isinstance(messages, list) or not messages or not all(isinstance(m, dict) for m in messages):
        return _bad("messages must be a non-empty list of message objects", "messages")
    if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
        return _bad("tools must be a list of tool objects", "tools")
    if not isinstance(body.get("seed", 0), (int, type(None))) or isinstance(body.get("seed"), bool):
        return _bad("seed must be an integer", "seed")
    if not isinstance(body.get("stream", False), (bool, type(None))):
        return _bad("stream must be a boolean", "stream")
    options = body.get("stream_options")
    if options is not None and (not body.get("stream") or not isinstance(options, dict)):
        return _bad("stream_options is only allowed when stream is true, as an object", "stream_options")
    return None


def create_app(config: ServeConfig | None = None) -> FastAPI:
    server = SimServer(config or ServeConfig())
    app = FastAPI(title="PushBench serve-sim (SimLM, not a real model)", docs_url=None, redoc_url=None,
                  openapi_url=None)
    app.state.sim = server

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:  # 404, 405, ...
        kind = "invalid_request_error" if exc.status_code < 500 else "server_error"
        message = f"{request.method} {request.url.path}: {exc.detail}"
        if request.url.path.startswith(ANTHROPIC_PREFIX):
            return anthropic_error(exc.status_code, message, getattr(exc, "headers", None))
        if gemini_api.is_gemini_path(request.url.path):
            return gemini_api.error(exc.status_code, message, getattr(exc, "headers", None))
        return _error(exc.status_code, message, kind, headers=getattr(exc, "headers", None))

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> Response:
        return _error(400, f"invalid request: {str(exc)[:300]}", "invalid_request_error")

    @app.get("/v1/models")
    async def models() -> Response:
        data = [{"id": name, "object": "model", "created": 0, "owned_by": "pushbench-simlm"} for name in MODELS]
        return Response(orjson.dumps({"object": "list", "data": data}), media_type="application/json")

    @app.get("/sim/stats")
    async def stats() -> Response:
        return Response(orjson.dumps(dict(server.stats)), media_type="application/json")

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Response:
        server.stats["requests"] += 1
        try:
            body = orjson.loads(await request.body())
        except orjson.JSONDecodeError:
            return _error(400, "the request body is not valid JSON", "invalid_request_error")
        if (bad := _invalid(body)) is not None:
            server.stats["rejected"] += 1
            return bad
        key = request_hash(body)
        fault = server.fault(key)
        if fault is not None:
            server.stats[f"fault_{fault}"] += 1
            return await _fault_response(fault, server.config)
        try:
            data = server.completion(body, key)
        except ValueError as err:  # e.g. SimLM has no reader for these tools
            return _error(400, str(err), "invalid_request_error")
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            return StreamingResponse(sse_events(completion_chunks(data, include_usage)),
                                     media_type="text/event-stream", headers={"cache-control": "no-cache"})
        return Response(orjson.dumps(data), media_type="application/json")

    register_product_routes(app, server, MODELS)
    gemini_api.register(app, server, MODELS)
    return app


async def _fault_response(fault: str, config: ServeConfig) -> Response:
    if fault == "rate_limit":
        wait = config.retry_after
        headers = {"retry-after": str(max(0, round(wait))), "retry-after-ms": str(int(wait * 1000))}
        return _error(429, "simulated rate limit", "rate_limit_error", "rate_limit_exceeded", headers)
    if fault == "server_error":
        return _error(500, "simulated server error", "server_error")
    await asyncio.sleep(config.fault_delay)  # the client should have timed out by now
    return _error(504, "simulated stall", "server_error")


def serve(host: str, port: int, config: ServeConfig, log_level: str = "warning") -> None:
    import uvicorn

    from pushbench.tokens import encoding

    encoding()  # load the tokenizer before listening, so the first request is not a slow one
    uvicorn.run(create_app(config), host=host, port=port, log_level=log_level, access_log=False)
