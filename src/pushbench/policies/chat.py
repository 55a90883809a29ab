"""``openai/<model>``: any OpenAI-compatible chat-completions endpoint, through the openai SDK.

The policy sends exactly what SimLM receives in process (the rendered messages, the tool schemas
and the episode seed as the request ``seed``) and turns the reply back into the assistant message
SimLM would have produced: ``{"role", "content", "tool_calls"}`` with the function name and the
arguments text verbatim. Malformed replies (bad JSON arguments, an unknown tool, text instead of a
call) are returned as they are; the environment makes them invalid actions.

Transport faults (429, 408/409, 5xx, timeouts, dropped connections) are retried here, with the
SDK's own retries off: the wait is the server's ``retry-after-ms``/``Retry-After`` when given, else
exponential backoff with a deterministic jitter. Retries are not agent steps; they are counted in
``stats`` (which the runner writes to the episode's trace). Calls and tokens come from ``usage``.
Responses are cached on disk by the hash of the full request (``policies/cache.py``).
"""

from __future__ import annotations

import asyncio
import itertools
import email.utils
import hashlib
import os
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import httpx
import openai
import orjson
from openai.types.chat import ChatCompletion

from pushbench import config
from pushbench.policies.base import Turn, turn_from_message
from pushbench.policies.cache import CachedResponse, ResponseCache, request_key

DEFAULT_WINDOW = 128_000
LOCAL_KEY = "sk-local"  # any key works for a local server (serve-sim, vLLM, Ollama, llama.cpp)
RETRY_STATUS = frozenset({408, 409, 429})
# Requests go through the SDK client's generic ``post`` with the body already encoded: the typed
# ``chat.completions.create`` walks every message through its TypedDict transform, which costs
# tens of milliseconds per call at a 10k-token context (more than the model call to serve-sim).
COMPLETIONS = "/chat/completions"


def default_cache_dir() -> Path:
    return config.DATA / "cache" / "responses"


@dataclass
class ChatOptions:
    base_url: str | None = None  # default: $OPENAI_BASE_URL, else the SDK's default endpoint
    request_timeout: float = 60.0  # seconds per HTTP attempt
    max_retries: int = 8  # transport retries per call before the episode fails
    backoff: float = 0.5  # first wait without Retry-After; doubles per retry
    backoff_max: float = 60.0  # no single wait is longer (Retry-After included)
    cache: bool = True
    cache_dir: Path | None = None  # default: data/cache/responses
    context_window: int | None = None  # default: the sim-* profile's window, else 128k tokens
    temperature: float | None = None
    max_tokens: int | None = None
    api_key: str | None = None  # default: $OPENAI_API_KEY (a placeholder for a local base URL)

    @classmethod
    def from_kwargs(cls, **kwargs: Any) -> "ChatOptions":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(kwargs) - known)
        if unknown:
            raise ValueError(f"unknown chat policy option(s) {unknown}; known: {sorted(known)}")
        return cls(**{k: v for k, v in kwargs.items() if v is not None})


@dataclass
class ChatStats:
    requests: int = 0  # HTTP attempts sent
    retries: int = 0  # attempts that failed with a transport fault and were retried
    cache_hits: int = 0
    waited_seconds: float = 0.0
    faults: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["waited_seconds"] = round(self.waited_seconds, 3)
        return data


class ChatPolicyError(RuntimeError):
    """A call that cannot succeed (bad request, bad key, retries exhausted)."""


def window_for(model: str) -> int:
    """A model's context window: SimLM's profile for ``sim-*`` names, else a 128k default."""
    if model.startswith("sim-"):
        from pushbench.policies.sim.profiles import PROFILES

        profile = PROFILES.get(model[4:])
        if profile is not None:
            return min(profile.window, 10**9)
    return DEFAULT_WINDOW


def message_from_reply(message: Any) -> dict[str, Any]:
    """The SDK's assistant message as the plain dict SimLM produces (no SDK-only fields)."""
    calls = []
    for call in message.tool_calls or []:
        fn = getattr(call, "function", None)  # custom (non-function) tool calls have none
        calls.append({"id": call.id, "type": "function", "function": {
            "name": getattr(fn, "name", "") or "", "arguments": getattr(fn, "arguments", "") or ""}})
    if calls:
        return {"role": "assistant", "content": message.content, "tool_calls": calls}
    return {"role": "assistant", "content": message.content or ""}


def _header_wait(headers: Any) -> float | None:
    """Seconds the server asked us to wait (``retry-after-ms``, ``Retry-After`` seconds or date)."""
    if headers is None:
        return None
    try:
        if (ms := headers.get("retry-after-ms")) is not None:
            return max(0.0, float(ms) / 1000)
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            when = email.utils.parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError):
        return None


class ChatPolicy:
    def __init__(self, model: str, options: ChatOptions | None = None):
        if not model:
            raise ValueError("openai/<model> needs a model name, e.g. openai/gpt-4o or openai/sim-base")
        self.options = options or ChatOptions()
        self.model = model
        self.name = f"openai/{model}"
        self.context_window = self.options.context_window or window_for(model)
        self.endpoint = (self.options.base_url or os.environ.get("OPENAI_BASE_URL") or "").rstrip("/")
        self.api_key = (self.options.api_key or os.environ.get("OPENAI_API_KEY")
                        or (LOCAL_KEY if self.endpoint else None))
        if not self.api_key:
            raise ValueError("openai/* models need OPENAI_API_KEY (or --base-url for a local server)")
        self.cache = ResponseCache(self.options.cache_dir or default_cache_dir()) if self.options.cache else None
        self.stats = ChatStats()
        self._client: openai.OpenAI | None = None
        self._aclient: openai.AsyncOpenAI | None = None

    # --- the request ----------------------------------------------------------------------
    def request_body(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], seed: int) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": messages, "tools": tools, "seed": int(seed)}
        if self.options.temperature is not None:
            body["temperature"] = self.options.temperature
        if self.options.max_tokens is not None:
            body["max_tokens"] = self.options.max_tokens
        return body

    def _cached(self, key: str) -> Turn | None:
        hit = self.cache.get(key) if self.cache else None
        if hit is None:
            return None
        self.stats.cache_hits += 1
        return turn_from_message(hit.message, hit.input_tokens, hit.output_tokens)

    def _turn(self, key: str, response: Any) -> Turn:
        if not getattr(response, "choices", None):
            raise ChatPolicyError(f"{self.name}: the response has no choices")
        message = message_from_reply(response.choices[0].message)
        usage = getattr(response, "usage", None)
        tokens_in = int(getattr(usage, "prompt_tokens", 0) or 0)
        tokens_out = int(getattr(usage, "completion_tokens", 0) or 0)
        if self.cache:
            self.cache.put(key, CachedResponse(message, tokens_in, tokens_out))
        return turn_from_message(message, tokens_in, tokens_out)

    def _retry_wait(self, err: Exception, attempt: int, key: str) -> float | None:
        """Seconds to wait before retrying ``err``, or None when it is not a transport fault."""
        if isinstance(err, openai.APIConnectionError):  # includes APITimeoutError
            kind, asked = ("timeout" if isinstance(err, openai.APITimeoutError) else "connection"), None
        elif isinstance(err, openai.APIStatusError) and (err.status_code in RETRY_STATUS or err.status_code >= 500):
            kind, asked = str(err.status_code), _header_wait(err.response.headers)
        else:
            return None
        self.stats.faults[kind] = self.stats.faults.get(kind, 0) + 1
        if attempt >= self.options.max_retries:
            raise ChatPolicyError(f"{self.name}: gave up after {attempt + 1} attempts ({kind}): {err}") from err
        if asked is None:
            jitter = int(hashlib.sha256(f"{key}:{attempt}".encode()).hexdigest()[:8], 16) / 2**32
            asked = self.options.backoff * 2**attempt * (0.5 + jitter)
        wait = min(asked, self.options.backoff_max)
        self.stats.retries += 1
        self.stats.waited_seconds += wait
        return wait

    def _fail(self, err: Exception) -> ChatPolicyError:
        status = getattr(err, "status_code", None)
        return ChatPolicyError(f"{self.name}: request failed{f' with HTTP {status}' if status else ''}: {err}")

    def _http_client(self, kind: type) -> dict[str, Any]:
        """A plain-HTTP endpoint (a local server) needs no TLS: skip loading the CA bundle, which
        costs more than a whole SimLM episode when every episode opens its own client."""
        if self.endpoint.startswith("http://"):
            return {"http_client": kind(verify=False, timeout=self.options.request_timeout)}
        return {}

    # --- sync -----------------------------------------------------------------------------
    def client(self) -> openai.OpenAI:
        if self._client is None:
            self._client = openai.OpenAI(api_key=self.api_key, base_url=self.endpoint or None, max_retries=0,
                                         timeout=self.options.request_timeout, **self._http_client(httpx.Client))
        return self._client

    def _prepare(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                 seed: int) -> tuple[dict[str, Any], str, Turn | None]:
        """The request body, its cache key, and the cached turn if there is one."""
        body = self.request_body(messages, tools, seed)
        key = request_key(self.endpoint, body)
        return body, key, self._cached(key)

    def _wait_or_raise(self, err: openai.OpenAIError, attempt: int, key: str) -> float:
        """Seconds to wait before retrying a failed attempt; raises when no retry is left."""
        wait = self._retry_wait(err, attempt, key)
        if wait is None:
            raise self._fail(err) from err
        return wait

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], seed: int) -> Turn:
        body, key, turn = self._prepare(messages, tools, seed)
        if turn is not None:
            return turn
        for attempt in itertools.count():
            self.stats.requests += 1
            try:
                response = self.client().post(COMPLETIONS, cast_to=ChatCompletion, content=orjson.dumps(body),
                                              options={"timeout": self.options.request_timeout})
            except openai.OpenAIError as err:
                time.sleep(self._wait_or_raise(err, attempt, key))
                continue
            return self._turn(key, response)
        raise AssertionError("unreachable")  # pragma: no cover

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    # --- async ----------------------------------------------------------------------------
    def aclient(self) -> openai.AsyncOpenAI:
        if self._aclient is None:
            self._aclient = openai.AsyncOpenAI(api_key=self.api_key, base_url=self.endpoint or None, max_retries=0,
                                               timeout=self.options.request_timeout,
                                               **self._http_client(httpx.AsyncClient))
        return self._aclient

    async def aact(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], seed: int) -> Turn:
        body, key, turn = self._prepare(messages, tools, seed)
        if turn is not None:
            return turn
        for attempt in itertools.count():
            self.stats.requests += 1
            try:
                response = await self.aclient().post(COMPLETIONS, cast_to=ChatCompletion, content=orjson.dumps(body),
                                                     options={"timeout": self.options.request_timeout})
            except openai.OpenAIError as err:
                await asyncio.sleep(self._wait_or_raise(err, attempt, key))
                continue
            return self._turn(key, response)
        raise AssertionError("unreachable")  # pragma: no cover

    async def aclose(self) -> None:
        if self._aclient is not None:
            await self._aclient.close()
            self._aclient = None
        self.close()


def chat_policy(model: str, **options: Any) -> ChatPolicy:
    """The ``openai`` provider's factory (``pushbench.registry.PROVIDERS``)."""
    return ChatPolicy(model, ChatOptions.from_kwargs(**options))
