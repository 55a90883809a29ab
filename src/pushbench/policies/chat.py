"""``openai/<model>``: any OpenAI-compatible chat-completions endpoint, through the openai SDK.

The policy sends exactly what SimLM receives in process (the rendered messages, the tool schemas
and the episode seed as the request ``seed``) and turns the reply back into the assistant message
SimLM would have produced: ``{"role", "content", "tool_calls"}`` with the function name and the
arguments text verbatim. Malformed replies (bad JSON arguments, an unknown tool, text instead of a
call) are returned as they are; the environment makes them invalid actions.

Transport faults (429, 408/409, 5xx, timeouts, dropped connections) are retried here, with the
SDK's own retries off: the wait is the server's ``retry-after-ms``/``Retry-After`` when given, else
exponential backoff with a deterministic jitter, at most ``max_retries`` times and never past the
call's or the episode's deadline. Retries are not agent steps; they are counted in ``stats``
(which the runner writes to the episode's trace). Calls and tokens come from ``usage``.
Responses are cached on disk by the hash of the full request (``policies/cache.py``).

Each call sends ``max_tokens`` (1024 unless set), and the memory leaves that much room in the
context window. What a real server does at the limits becomes the episode's recorded outcome,
never a retry: a prompt the server refuses as too long ends it with ``context_overflow``, a
reply cut at ``max_tokens`` before any tool call with ``max_tokens``, a spent deadline with
``deadline`` (``PolicyStop``; the backend ends the episode with that termination).
"""

from __future__ import annotations

import email.utils
import hashlib
import itertools
import os
import re
import time
from typing import Any

import httpx
import openai
import orjson
from openai.types.chat import ChatCompletion

from pushbench.policies.base import PolicyStop, Turn, turn_from_message
from pushbench.policies.cache import CachedResponse, ResponseCache, request_key
from pushbench.policies.spend import Meter
from pushbench.policies.chat_options import (DEFAULT_MAX_TOKENS, ChatOptions, ChatStats, default_cache_dir,
                                             param_defaults)

DEFAULT_WINDOW = 128_000
LOCAL_KEY = "sk-local"  # any key works for a local server (serve-sim, vLLM, Ollama, llama.cpp)
RETRY_STATUS = frozenset({408, 409, 429})
# Requests go through the SDK client's generic ``post`` with the body already encoded: the typed
# ``chat.completions.create`` walks every message through its TypedDict transform, which costs
# tens of milliseconds per call at a 10k-token context (more than the model call to serve-sim).
COMPLETIONS = "/chat/completions"
# How servers say the prompt does not fit: OpenAI and vLLM (``context_length_exceeded``, "maximum
# context length"), llama-cpp-python ("exceed context window"), llama.cpp's server ("exceeds the
# available context size"), Ollama and others ("context length").
_OVERFLOW = re.compile(r"context[ _-]?(length|window|size)|maximum context|prompt is too long", re.I)


class ChatPolicyError(RuntimeError):
    """A call that cannot succeed (bad request, bad key, retries exhausted)."""


class EndpointError(ValueError):
    """The check before a run found the endpoint unreachable, the key refused or the model not served."""


KEY_VARIABLE = "OPENAI_API_KEY"


def _message(err: Exception) -> str:
    """An SDK error's own message, in one short line."""
    body = getattr(err, "body", None)
    if isinstance(body, dict):
        error = body.get("error")
        inner: dict[str, Any] = error if isinstance(error, dict) else body
        if isinstance(inner.get("message"), str):
            return " ".join(inner["message"].split())[:300]
    return " ".join(str(err).split())[:300]


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


def cached_tokens(usage: Any) -> int:
    """Input tokens the provider answered from its prompt cache (OpenAI's
    ``prompt_tokens_details.cached_tokens``; LiteLLM maps other providers' counts there)."""
    details = getattr(usage, "prompt_tokens_details", None)
    if isinstance(details, dict):
        return int(details.get("cached_tokens") or 0)
    return int(getattr(details, "cached_tokens", 0) or 0)


def is_context_overflow(err: Exception) -> bool:
    """A server's answer that the prompt does not fit the model's context."""
    if not isinstance(err, openai.APIStatusError) or err.status_code not in (400, 413):
        return False
    return getattr(err, "code", None) == "context_length_exceeded" or bool(_OVERFLOW.search(str(err)))


class ChatPolicy:
    provider = "openai"

    def __init__(self, model: str, options: ChatOptions | None = None, meter: Meter | None = None):
        if not model:
            raise ValueError("openai/<model> needs a model name, e.g. openai/gpt-4o or openai/sim-base")
        self.options = options or ChatOptions()
        self.model = model
        self.name = f"{self.provider}/{model}"
        self.context_window = self._prompt_window()
        self.endpoint = self._endpoint()
        self.api_key = self._key()
        self.cache = ResponseCache(self.options.cache_dir or default_cache_dir()) if self.options.cache else None
        self.stats = ChatStats()
        self.meter = meter or Meter()  # the run's spend meter (caps); alone, it only counts
        self._spent = 0.0  # seconds of model calls in this episode (a policy serves one episode)
        self._client: openai.OpenAI | None = None

    def _endpoint(self) -> str:
        return (self.options.base_url or os.environ.get("OPENAI_BASE_URL") or "").rstrip("/")

    def _key(self) -> str | None:
        key = self.options.api_key or os.environ.get(KEY_VARIABLE) or (LOCAL_KEY if self.endpoint else None)
        if not key:
            raise EndpointError(f"{self.name} needs an API key: set {KEY_VARIABLE} (a local server given with "
                                "--base-url needs none)")
        return key

    def _window(self) -> int:
        return window_for(self.model)

    def _prompt_window(self) -> int:
        """Tokens the memory may fill: the model's window less the reply's ``max_tokens``. A
        sim-* profile's own window describes SimLM's attention, not a server limit, so it is
        used whole (serve-sim episodes stay identical to in-process ones)."""
        window = self.options.context_window or self._window()
        simulated = self.options.context_window is None and self.model.split("/")[-1].startswith("sim-")
        return window if simulated else max(1, window - self.options.max_tokens)

    # --- the request ----------------------------------------------------------------------
    def request_body(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], seed: int) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": messages, "seed": int(seed)}
        if tools:  # a memory's own request (a summary) has none; APIs refuse an empty list
            body["tools"] = tools
        if self.options.temperature is not None:
            body["temperature"] = self.options.temperature
        if self.options.max_tokens:
            body["max_tokens"] = self.options.max_tokens
        return body

    def _cached(self, key: str) -> Turn | None:
        hit = self.cache.get(key) if self.cache else None
        if hit is None:
            return None
        self.stats.cache_hits += 1
        self.meter.hit()
        return turn_from_message(hit.message, hit.input_tokens, hit.output_tokens)

    def _turn(self, key: str, response: Any) -> Turn:
        """The reply as a turn. A reply cut at ``max_tokens`` is not cached; cut inside a tool
        call, it goes on as that call (broken arguments make an invalid action); cut before
        any call, it ends the episode (``max_tokens``): its text is no decision to stop."""
        if not getattr(response, "choices", None):
            raise ChatPolicyError(f"{self.name}: the response has no choices")
        choice = response.choices[0]
        message = message_from_reply(choice.message)
        usage = getattr(response, "usage", None)
        turn = turn_from_message(message, int(getattr(usage, "prompt_tokens", 0) or 0),
                                 int(getattr(usage, "completion_tokens", 0) or 0))
        cached = cached_tokens(usage)
        self.stats.add_usage(turn.input_tokens, turn.output_tokens, cached)
        self.meter.charge(self.name, turn.input_tokens, turn.output_tokens, cached)
        if getattr(choice, "finish_reason", None) == "length":
            self.stats.length_cuts += 1
            if turn.call is None:
                raise self._stop("max_tokens", f"the reply was cut at max_tokens={self.options.max_tokens} "
                                 "before any tool call", turn)
        elif self.cache:
            self.cache.put(key, CachedResponse(message, turn.input_tokens, turn.output_tokens))
        return turn

    def _stop(self, reason: str, detail: str, turn: Turn | None = None) -> PolicyStop:
        self.stats.stop = reason
        return PolicyStop(reason, f"{self.name}: {detail}", turn)

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
        return min(asked, self.options.backoff_max)

    def _fail(self, err: Exception) -> ChatPolicyError:
        status = getattr(err, "status_code", None)
        return ChatPolicyError(f"{self.name}: request failed{f' with HTTP {status}' if status else ''}: {err}")

    def _left(self, started: float) -> float:
        """Seconds left before the call's or the episode's deadline, whichever comes first."""
        now = time.monotonic()
        return min(self.options.call_deadline - (now - started),
                   self.options.episode_deadline - self._spent - (now - started))

    def _after_failure(self, err: Exception, attempt: int, key: str, started: float) -> float:
        """The wait before the next attempt; raises when there is none (a client error, no
        retry left, a deadline, or a prompt the model cannot take)."""
        if is_context_overflow(err):
            raise self._stop("context_overflow", f"the server refused the prompt as too long: {err}") from err
        wait = self._retry_wait(err, attempt, key)
        if wait is None:
            raise self._fail(err) from err
        if wait >= self._left(started):
            raise self._stop("deadline", f"no time left for attempt {attempt + 2} (call deadline "
                             f"{self.options.call_deadline:g} s, episode deadline "
                             f"{self.options.episode_deadline:g} s); last fault: {err}") from err
        self.stats.retries += 1
        self.stats.waited_seconds += wait
        return wait

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], seed: int) -> Turn:
        """One model call with every decision in one place: the cache, the spend meter, retries
        and their waits, the deadlines; ``_send`` (the transport) only carries out the I/O."""
        body = self.request_body(messages, tools, seed)
        key = request_key(self.endpoint, body)
        if (cached := self._cached(key)) is not None:
            return cached
        content, started = orjson.dumps(body), time.monotonic()
        try:
            for attempt in itertools.count():
                left = self._left(started)
                if left <= 0:
                    raise self._stop("deadline", f"the episode's {self.options.episode_deadline:g} s of model "
                                     "calls are used up")
                self.meter.admit()  # a spent cap or a halted run: no new request
                self.stats.requests += 1
                try:
                    response = self._send(body, content, min(self.options.request_timeout, left))
                except self.transport_errors as err:
                    time.sleep(self._after_failure(err, attempt, key, started))
                    continue
                return self._turn(key, response)
            raise AssertionError("unreachable")  # pragma: no cover
        finally:
            self._spent += time.monotonic() - started

    # --- the transport (``LiteLLMPolicy`` replaces these two) ----------------------------------
    transport_errors: tuple[type[Exception], ...] = (openai.OpenAIError,)

    def _send(self, body: dict[str, Any], content: bytes, timeout: float) -> Any:
        return self.client().post(COMPLETIONS, cast_to=ChatCompletion, content=content, options={"timeout": timeout})

    def _http_client(self) -> dict[str, Any]:
        """A plain-HTTP endpoint (a local server) needs no TLS: skip loading the CA bundle, which
        costs more than a whole SimLM episode when every episode opens its own client."""
        if self.endpoint.startswith("http://"):
            return {"http_client": httpx.Client(verify=False, timeout=self.options.request_timeout)}
        return {}

    def client(self) -> openai.OpenAI:
        if self._client is None:
            self._client = openai.OpenAI(api_key=self.api_key, base_url=self.endpoint or None, max_retries=0,
                                         timeout=self.options.request_timeout, **self._http_client())
        return self._client

    # --- the check before a run ----------------------------------------------------------
    def check_endpoint(self) -> None:
        """Before the first call of a run: the endpoint answers, takes the key and serves the model
        (one ``GET /models``, which costs no tokens); else ``EndpointError`` saying which."""
        client = self.client().with_options(max_retries=1, timeout=min(30.0, self.options.request_timeout))
        where = str(client.base_url).rstrip("/")
        try:
            served = [m.id for m in client.models.list()]
        except openai.AuthenticationError as err:
            raise EndpointError(f"{self.name}: {where} refused the API key (HTTP 401); check {KEY_VARIABLE}: "
                                f"{_message(err)}") from None
        except openai.PermissionDeniedError as err:
            raise EndpointError(f"{self.name}: {where} refused access (HTTP 403): {_message(err)}") from None
        except openai.NotFoundError:
            return  # a server without a model list (some gateways): the first call will tell
        except openai.APIConnectionError as err:
            raise EndpointError(f"{self.name}: cannot reach {where} ({_message(err)}); is the server "
                                "running and --base-url right?") from None
        except openai.APIStatusError as err:
            raise EndpointError(f"{self.name}: {where} answered HTTP {err.status_code} to GET /models: "
                                f"{_message(err)}") from None
        if served and self.model not in served:
            shown = ", ".join(sorted(served)[:12]) + (", ..." if len(served) > 12 else "")
            raise EndpointError(f"{self.name}: {where} does not serve a model {self.model!r}; it serves {shown}")

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


def resolve_options(**options: Any) -> ChatOptions:
    """params.yaml's ``chat:`` defaults, overridden by the options given (an experiment's
    ``chat:``, the CLI); None means "the default". Raises ValueError for a bad combination."""
    given = {k: v for k, v in options.items() if v is not None}
    return ChatOptions.from_kwargs(**{**param_defaults(), **given})


__all__ = ["DEFAULT_MAX_TOKENS", "ChatOptions", "ChatPolicy", "ChatPolicyError", "ChatStats", "EndpointError", "PolicyStop",
           "chat_policy", "default_cache_dir", "is_context_overflow", "resolve_options", "window_for"]


def chat_policy(model: str, meter: Meter | None = None, **options: Any) -> ChatPolicy:
    """The ``openai`` provider's factory (``pushbench.registry.PROVIDERS``)."""
    return ChatPolicy(model, resolve_options(**options), meter)
