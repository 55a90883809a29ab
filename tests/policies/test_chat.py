"""The ``openai/<model>`` chat policy with the real openai SDK over an in-process HTTP transport.

``httpx.MockTransport`` stands in for the network, so every request goes through the SDK's real
request building, status handling and response parsing; the handler scripts the server's answers
(429 with Retry-After, 500, timeouts, malformed tool calls). The end-to-end path against the real
``serve-sim`` server is in tests/serve/test_serve_sim.py.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from agentkit import make_env
from pushbench.backends.native import run_native
from pushbench.controllers import make_controller
from pushbench.memory import make_memory
from pushbench.scoring import score_events
from pushbench.policies import is_api_model, make_policy
from pushbench.policies.base import text_message, tool_call_message
from pushbench.policies.cache import ResponseCache, request_key
from pushbench import config
from pushbench.backends.langgraph import run_langgraph
from pushbench.policies.base import PolicyStop
from pushbench.policies.chat import (DEFAULT_MAX_TOKENS, ChatOptions, ChatPolicy, ChatPolicyError, _header_wait,
                                     is_context_overflow, window_for)

BASE = "http://sim.test/v1"
TOOLS = [{"type": "function", "function": {"name": "status", "description": "s",
                                            "parameters": {"type": "object", "properties": {}}}}]
MESSAGES = [{"role": "system", "content": "sys"}, {"role": "user", "content": "task"}]


def completion(message: dict[str, Any], prompt: int = 7, completion_tokens: int = 3) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "sim-base",
            "choices": [{"index": 0, "message": message, "logprobs": None,
                         "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion_tokens,
                      "total_tokens": prompt + completion_tokens}}


class Script:
    """A scripted server: each request pops the next answer (a response or an exception)."""

    def __init__(self, answers: list[Any], then: Any = None):
        self.answers = list(answers)
        self.then = then
        self.requests: list[dict[str, Any]] = []
        self.times: list[float] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(json.loads(request.content))
        self.times.append(time.monotonic())
        answer = self.answers.pop(0) if self.answers else self.then
        if isinstance(answer, Exception):
            raise answer
        return answer


def ok(message: dict[str, Any], **usage: int) -> httpx.Response:
    return httpx.Response(200, json=completion(message, **usage))


def status_call(call_id: str = "call_0") -> dict[str, Any]:
    return tool_call_message("status", {}, call_id)


def policy_with(script: Script, tmp_path: Path, **options: Any) -> ChatPolicy:
    options = {"base_url": BASE, "cache_dir": tmp_path / "cache", "backoff": 0.01, **options}
    policy = make_policy("openai/sim-base", **options)
    assert isinstance(policy, ChatPolicy)
    policy._client = openai.OpenAI(api_key="k", base_url=BASE, max_retries=0,
                                   http_client=httpx.Client(transport=httpx.MockTransport(script)))
    return policy


def rate_limited(headers: dict[str, str]) -> httpx.Response:
    return httpx.Response(429, headers=headers, json={"error": {"message": "slow down", "type": "rate_limit_error"}})


# --------------------------------------------------------------------------- requests and replies

def test_request_carries_messages_tools_and_seed_and_usage_is_recorded(tmp_path: Path) -> None:
    script = Script([ok(status_call(), prompt=123, completion_tokens=9)])
    turn = policy_with(script, tmp_path).act(MESSAGES, TOOLS, seed=4242)
    sent = script.requests[0]
    assert sent["model"] == "sim-base" and sent["seed"] == 4242
    assert sent["messages"] == MESSAGES and sent["tools"] == TOOLS
    assert turn.call is not None and turn.call.name == "status" and turn.call.arguments == "{}"
    assert (turn.input_tokens, turn.output_tokens) == (123, 9)
    assert turn.message == status_call()  # exactly SimLM's message shape: no SDK-only fields


def test_assistant_messages_round_trip_exactly(tmp_path: Path) -> None:
    """What the policy returns is what it sends back next turn, byte for byte."""
    call = tool_call_message("search", {"query": "test httpbin", "page": 2}, "call_3")
    script = Script([ok(call), ok(text_message("I stop here."))])
    policy = policy_with(script, tmp_path)
    first = policy.act(MESSAGES, TOOLS, 1)
    history = MESSAGES + [first.message, {"role": "tool", "tool_call_id": "call_3", "content": "page"}]
    second = policy.act(history, TOOLS, 1)
    assert first.message == call
    assert script.requests[1]["messages"] == history
    assert second.call is None and second.message == {"role": "assistant", "content": "I stop here."}


def test_malformed_replies_are_returned_as_they_are(tmp_path: Path) -> None:
    bad_json = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "search", "arguments": '{"query": "x"'}}]}
    unknown = tool_call_message("teleport", {"to": "mars"}, "c2")
    script = Script([ok(bad_json), ok(unknown)])
    policy = policy_with(script, tmp_path)
    a, b = policy.act(MESSAGES, TOOLS, 0), policy.act(MESSAGES, TOOLS, 1)
    assert a.call is not None and a.call.arguments == '{"query": "x"'
    assert b.call is not None and b.call.name == "teleport"


# --------------------------------------------------------------------------- retries

def test_429_waits_for_retry_after_ms_and_is_not_a_step(tmp_path: Path) -> None:
    script = Script([rate_limited({"retry-after-ms": "150"}), ok(status_call())])
    policy = policy_with(script, tmp_path)
    turn = policy.act(MESSAGES, TOOLS, 0)
    assert turn.call is not None
    assert script.times[1] - script.times[0] >= 0.14
    assert policy.stats.requests == 2 and policy.stats.retries == 1 and policy.stats.faults == {"429": 1}
    assert policy.stats.waited_seconds == pytest.approx(0.15)


def test_retry_after_seconds_and_dates_are_honoured() -> None:
    assert _header_wait(httpx.Headers({"retry-after": "2"})) == 2.0
    assert _header_wait(httpx.Headers({"retry-after-ms": "250", "retry-after": "9"})) == 0.25
    later = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 30))
    assert 25 < _header_wait(httpx.Headers({"retry-after": later})) <= 31
    assert _header_wait(httpx.Headers({"retry-after": "soon"})) is None
    assert _header_wait(httpx.Headers({})) is None


def test_5xx_and_timeouts_back_off_exponentially(tmp_path: Path) -> None:
    script = Script([httpx.Response(500, json={"error": {"message": "boom"}}),
                     httpx.ReadTimeout("stalled"), httpx.Response(503, json={}), ok(status_call())])
    policy = policy_with(script, tmp_path, backoff=0.02)
    policy.act(MESSAGES, TOOLS, 0)
    assert policy.stats.retries == 3 and policy.stats.faults == {"500": 1, "timeout": 1, "503": 1}
    gaps = [b - a for a, b in zip(script.times, script.times[1:])]
    assert gaps[0] >= 0.01 and gaps[1] >= 0.02 and gaps[2] >= 0.04  # 0.02 * 2^k * [0.5, 1.5)


def test_retries_are_bounded(tmp_path: Path) -> None:
    script = Script([], then=httpx.Response(500, json={}))
    policy = policy_with(script, tmp_path, max_retries=2)
    with pytest.raises(ChatPolicyError, match="gave up after 3 attempts"):
        policy.act(MESSAGES, TOOLS, 0)
    assert len(script.requests) == 3


@pytest.mark.parametrize("status", [400, 401, 404])
def test_client_errors_are_not_retried(tmp_path: Path, status: int) -> None:
    script = Script([httpx.Response(status, json={"error": {"message": "no"}})])
    with pytest.raises(ChatPolicyError, match=f"HTTP {status}"):
        policy_with(script, tmp_path).act(MESSAGES, TOOLS, 0)
    assert len(script.requests) == 1


def test_connection_errors_are_retried_too(tmp_path: Path) -> None:
    script = Script([rate_limited({"retry-after": "0"}), httpx.ConnectError("refused"), ok(status_call())])
    policy = policy_with(script, tmp_path)
    turn = policy.act(MESSAGES, TOOLS, 0)
    assert turn.call is not None and policy.stats.retries == 2
    assert policy.stats.faults == {"429": 1, "connection": 1}


# --------------------------------------------------------------------------- cache

def test_cache_hit_makes_no_request(tmp_path: Path) -> None:
    script = Script([ok(status_call(), prompt=50, completion_tokens=5)], then=ok(text_message("x")))
    first = policy_with(script, tmp_path).act(MESSAGES, TOOLS, 3)
    again = policy_with(script, tmp_path)
    second = again.act(MESSAGES, TOOLS, 3)
    assert len(script.requests) == 1 and again.stats.cache_hits == 1 and again.stats.requests == 0
    assert second.message == first.message and (second.input_tokens, second.output_tokens) == (50, 5)
    again.act(MESSAGES, TOOLS, 4)  # another seed is another request
    assert len(script.requests) == 2


def test_cache_can_be_disabled(tmp_path: Path) -> None:
    script = Script([], then=ok(status_call()))
    for _ in range(2):
        policy_with(script, tmp_path, cache=False).act(MESSAGES, TOOLS, 3)
    assert len(script.requests) == 2 and not (tmp_path / "cache").exists()


def test_cache_key_covers_the_whole_request(tmp_path: Path) -> None:
    body = {"model": "m", "messages": MESSAGES, "tools": TOOLS, "seed": 1}
    keys = {request_key(BASE, body), request_key("http://other/v1", body),
            request_key(BASE, {**body, "seed": 2}), request_key(BASE, {**body, "model": "n"}),
            request_key(BASE, {**body, "tools": []}), request_key(BASE, {**body, "temperature": 0.5}),
            request_key(BASE, {**body, "messages": MESSAGES[:1]})}
    assert len(keys) == 7
    assert request_key(BASE, dict(reversed(list(body.items())))) == request_key(BASE, body)
    cache = ResponseCache(tmp_path)
    key = request_key(BASE, body)
    (tmp_path / key[:2]).mkdir()
    (tmp_path / key[:2] / f"{key}.json").write_text("{torn")
    assert cache.get(key) is None  # a damaged entry is a miss, not a crash


# --------------------------------------------------------------------------- options and names

def test_options_and_errors(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ValueError, match="OPENAI_API_KEY"):
        make_policy("openai/gpt-4o")
    with pytest.raises(ValueError, match="unknown chat policy option"):
        make_policy("openai/sim-base", base_url=BASE, bogus=1)
    with pytest.raises(ValueError, match="unknown model"):
        make_policy("anthropic/x")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    policy = make_policy("openai/gpt-4o", request_timeout=5, cache_dir=tmp_path)
    assert policy.name == "openai/gpt-4o" and policy.context_window == 128_000 - DEFAULT_MAX_TOKENS
    assert make_policy("sim/base", base_url=BASE).name == "sim/base"  # SimLM ignores client options
    assert is_api_model("openai/x") and not is_api_model("sim/base")
    assert window_for("sim-mini") == 32_000 and window_for("sim-base") == 64_000
    assert ChatOptions.from_kwargs(base_url=None).base_url is None  # None means "default"


# --------------------------------------------------------------------------- whole episodes

def episode(policy: Any, controller: str):
    env = make_env("reposcan-requests-fixture-n010")
    run = run_native(env, policy, make_controller(controller), make_memory("full"), 5)
    return env, run, score_events(env.verifier.events, env.task)


def test_malformed_answers_become_invalid_actions_and_the_episode_goes_on(tmp_path: Path) -> None:
    replies = [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "search", "arguments": '{"query": "test'}}]},
        tool_call_message("teleport", {}, "b"),
        tool_call_message("search", {"query": "test httpbin", "page": 1}, "c"),
        text_message("That is all."),
    ]
    script = Script([ok(m) for m in replies])
    policy = policy_with(script, tmp_path, cache=False)
    env, run, m = episode(policy, "standard")
    assert m["invalid_actions"] == 2 and m["steps"] == 3 and m["termination"] == "give_up"
    errors = [msg["content"] for msg in run.transcript if msg["role"] == "tool"]
    assert errors[0].startswith("ERROR: arguments are not valid JSON")
    assert errors[1].startswith("ERROR: unknown tool 'teleport'")
    assert errors[2].startswith('search "test httpbin": page 1')
    assert run.llm_calls == 4 and run.input_tokens == 4 * 7 and run.output_tokens == 4 * 3


def test_a_text_answer_under_gating_is_refused_and_the_episode_continues(tmp_path: Path) -> None:
    script = Script([ok(text_message("Done!"))], then=ok(tool_call_message("final", {"count": 10}, "f")))
    env, run, m = episode(policy_with(script, tmp_path, cache=False), "gated")
    assert run.transcript[1]["role"] == "user" and "final blocked" in run.transcript[1]["content"]
    assert m["termination"] == "budget" and run.llm_calls == env.task.budget


def test_retries_do_not_count_as_steps_or_calls(tmp_path: Path) -> None:
    answers: list[Any] = []
    for i in range(3):
        answers += [rate_limited({"retry-after-ms": "1"}), httpx.ReadTimeout("slow"),
                    ok(tool_call_message("status", {}, f"s{i}"))]
    answers.append(ok(text_message("stop")))
    policy = policy_with(Script(answers), tmp_path, cache=False)
    env, run, m = episode(policy, "standard")
    assert m["steps"] == 3 and run.llm_calls == 4 and m["status_calls"] == 3
    assert policy.stats.requests == 10 and policy.stats.retries == 6


# --------------------------------------------------------------------------- real servers' limits

def cut(message: dict[str, Any]) -> httpx.Response:
    """A reply the server cut at max_tokens."""
    data = completion(message, completion_tokens=DEFAULT_MAX_TOKENS)
    data["choices"][0]["finish_reason"] = "length"
    return httpx.Response(200, json=data)


OVERFLOW_BODIES = [  # how servers refuse a prompt that does not fit
    {"error": {"message": "This model's maximum context length is 2048 tokens. However, your messages "
               "resulted in 2301 tokens.", "type": "invalid_request_error", "param": "messages",
               "code": "context_length_exceeded"}},
    {"error": {"message": "Requested tokens (2301) exceed context window of 2048",
               "type": "internal_server_error", "param": None, "code": None}},
    {"error": {"code": 400, "message": "the request exceeds the available context size, try increasing it",
               "type": "exceed_context_size_error"}},
]


def overflow(index: int = 0) -> httpx.Response:
    return httpx.Response(400, json=OVERFLOW_BODIES[index])


def test_defaults_come_from_params_and_every_call_sends_max_tokens(tmp_path: Path) -> None:
    defaults = ChatOptions()
    assert config.params("chat") == {name: getattr(defaults, name) for name in config.params("chat")}
    assert defaults.max_tokens == DEFAULT_MAX_TOKENS == 1024
    script = Script([ok(status_call())])
    policy_with(script, tmp_path).act(MESSAGES, TOOLS, 0)
    assert script.requests[0]["max_tokens"] == 1024 and "temperature" not in script.requests[0]
    script = Script([ok(status_call())])
    policy_with(script, tmp_path, max_tokens=0, temperature=0.0, cache=False).act(MESSAGES, TOOLS, 0)
    assert "max_tokens" not in script.requests[0] and script.requests[0]["temperature"] == 0.0


def test_the_prompt_leaves_room_for_the_reply(tmp_path: Path) -> None:
    small = make_policy("openai/smollm", base_url=BASE, context_window=2048, max_tokens=256, cache_dir=tmp_path)
    assert small.context_window == 2048 - 256
    assert make_policy("openai/sim-mini", base_url=BASE, cache_dir=tmp_path).context_window == 32_000
    for bad, message in [({"context_window": 256, "max_tokens": 256}, "must exceed max_tokens"),
                         ({"temperature": 2.5}, "between 0 and 2"), ({"call_deadline": 0}, "must be > 0"),
                         ({"max_tokens": -1}, ">= 0")]:
        with pytest.raises(ValueError, match=message):
            make_policy("openai/smollm", base_url=BASE, cache_dir=tmp_path, **bad)


@pytest.mark.parametrize("index", range(len(OVERFLOW_BODIES)))
def test_a_context_length_error_is_not_retried_and_says_so(tmp_path: Path, index: int) -> None:
    script = Script([overflow(index)], then=ok(status_call()))
    policy = policy_with(script, tmp_path)
    with pytest.raises(PolicyStop) as stop:
        policy.act(MESSAGES, TOOLS, 0)
    assert stop.value.reason == "context_overflow" and stop.value.turn is None
    assert "refused the prompt as too long" in str(stop.value)
    assert len(script.requests) == 1 and policy.stats.stop == "context_overflow"
    assert not is_context_overflow(openai.BadRequestError("bad tool schema", response=httpx.Response(
        400, request=httpx.Request("POST", BASE)), body=None))


def test_context_overflow_ends_the_episode_with_its_own_termination(tmp_path: Path) -> None:
    script = Script([ok(tool_call_message("search", {"query": "test httpbin"}, "a")), overflow(0)],
                    then=ok(status_call()))
    policy = policy_with(script, tmp_path, cache=False)
    env, run, m = episode(policy, "gated")
    assert m["termination"] == "context_overflow" and m["steps"] == 1 and len(script.requests) == 2
    assert run.llm_calls == 1 and not m["success"]


def test_a_text_reply_cut_at_max_tokens_ends_the_episode_and_is_recorded(tmp_path: Path) -> None:
    script = Script([cut(text_message("Let me think about this step by step. First"))], then=ok(status_call()))
    policy = policy_with(script, tmp_path)
    env, run, m = episode(policy, "gated")
    assert m["termination"] == "max_tokens" and m["steps"] == 0 and len(script.requests) == 1
    assert run.llm_calls == 1 and run.output_tokens == DEFAULT_MAX_TOKENS  # the cut reply is counted
    assert run.transcript[-1]["content"].startswith("Let me think")  # and kept in the trace
    assert policy.stats.as_dict()["length_cuts"] == 1 and policy.stats.stop == "max_tokens"
    assert not list((tmp_path / "cache").rglob("*.json*"))  # a cut reply is never replayed from the cache


def test_a_tool_call_cut_at_max_tokens_is_an_invalid_action(tmp_path: Path) -> None:
    broken = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "search", "arguments": '{"query": "test htt'}}]}
    script = Script([cut(broken), ok(text_message("stop"))])
    env, run, m = episode(policy_with(script, tmp_path, cache=False), "standard")
    assert m["invalid_actions"] == 1 and m["termination"] == "give_up" and run.llm_calls == 2
    assert run.transcript[1]["content"].startswith("ERROR: arguments are not valid JSON")


def test_a_call_that_keeps_timing_out_stops_at_the_call_deadline(tmp_path: Path) -> None:
    script = Script([], then=httpx.ReadTimeout("slow"))
    policy = policy_with(script, tmp_path, max_retries=1000, call_deadline=0.5, backoff=0.05, backoff_max=0.1)
    started = time.monotonic()
    env, run, m = episode(policy, "gated")
    assert time.monotonic() - started < 5
    assert m["termination"] == "deadline" and m["steps"] == 0 and run.llm_calls == 0
    assert 3 <= len(script.requests) < 50 and policy.stats.stop == "deadline"


def test_slow_calls_stop_at_the_episode_deadline(tmp_path: Path) -> None:
    def slow(request: httpx.Request) -> httpx.Response:
        time.sleep(0.15)
        return ok(status_call())

    policy = make_policy("openai/sim-base", base_url=BASE, cache=False, episode_deadline=0.5)
    policy._client = openai.OpenAI(api_key="k", base_url=BASE, max_retries=0,
                                   http_client=httpx.Client(transport=httpx.MockTransport(slow)))
    env, run, m = episode(policy, "gated")
    assert m["termination"] == "deadline" and 2 <= m["steps"] <= 4  # 0.15 s a call, 0.5 s in all
    assert m["steps"] < env.task.budget and run.llm_calls == m["steps"]


def test_the_langgraph_backend_records_the_same_stop(tmp_path: Path) -> None:
    script = Script([ok(status_call()), overflow(1)], then=ok(status_call()))
    env = make_env("reposcan-requests-fixture-n010")
    run_langgraph(env, policy_with(script, tmp_path, cache=False), make_controller("gated"), make_memory("full"), 5)
    m = score_events(env.verifier.events, env.task)
    assert m["termination"] == "context_overflow" and m["steps"] == 1
