"""serve-sim's agent-product protocols against the official SDKs' own parsers, over a live server.

Anthropic Messages (``anthropic`` SDK: ``messages.create`` / ``messages.stream``) and OpenAI
Responses (``openai`` SDK: ``responses.create``, streamed and not): a RepoScan episode driven
through each, with the MCP tools under a product's names beside the product's own tools, makes
(Claude Code's ``mcp__pushbench__search`` names; Codex's ``mcp__pushbench`` namespace) makes
exactly the calls in-process SimLM makes on the bare tools; streamed answers assemble to the
non-streamed ones; tools of no known family get a plain text reply; errors come in each API's
error shape.
"""

from __future__ import annotations

import json
import time
from typing import Any, Callable, Iterator

import httpx
import openai
import pytest
from fastapi.testclient import TestClient

from agentkit import make_env, task
from pushbench.policies.sim import SimLM
from pushbench.serve.app import create_app
from pushbench.tools.base import ToolCall
from test_serve_sim import Server, launch, ready, stop

TASK = "reposcan-requests-fixture-n010"
PREFIX = "mcp__pushbench__"
SYSTEM = "You are an agent product. Use the tools you are given."
TURNS = 8


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    started = launch([], tmp_path_factory.mktemp("serve-sim-products") / "server.log")
    try:
        assert ready(started, time.monotonic() + 90), started.log.read_text()
        yield started
    finally:
        stop(started)


def _base_url(server: Server) -> str:
    return server.url.removesuffix("/v1")


def reference_calls(turns: int = TURNS) -> list[tuple[str, dict[str, Any]]]:
    """The calls in-process SimLM makes on the bare tools, seed 0 (serve-sim's default)."""
    env, sim = make_env(TASK), SimLM("base")
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": task(TASK).objective}]
    calls = []
    for _ in range(turns):
        turn = sim.act(messages, env.schemas(), 0)
        messages.append(turn.message)
        if turn.call is None:
            break
        args = json.loads(turn.call.arguments)
        calls.append((turn.call.name, args))
        obs = env.execute(ToolCall(turn.call.name, args))
        messages.append({"role": "tool", "tool_call_id": turn.call.call_id, "content": obs.text})
        if env.done:
            break
    return calls


def drive(step: Callable[[list[Any]], tuple[str, str, dict[str, Any]] | None],
          result: Callable[[str, str], Any], turns: int = TURNS) -> list[tuple[str, dict[str, Any]]]:
    """Run an episode where ``step(history)`` asks the server for one turn (None: a text reply)
    and ``result(call_id, text)`` is the history entry for a tool's answer."""
    env, history, calls = make_env(TASK), [], []
    for _ in range(turns):
        got = step(history)
        if got is None:
            break
        call_id, name, args = got
        assert name.startswith(PREFIX), name  # SimLM answers under the product's MCP name
        calls.append((name.removeprefix(PREFIX), args))
        obs = env.execute(ToolCall(name.removeprefix(PREFIX), args))
        history.append(result(call_id, obs.text))
        if env.done:
            break
    return calls


def anthropic_tools() -> list[dict[str, Any]]:
    own = [{"name": "Bash", "description": "Run a shell command.",
            "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}}]
    return own + [{"name": PREFIX + s["function"]["name"], "description": s["function"]["description"],
                   "input_schema": s["function"]["parameters"]} for s in make_env(TASK).schemas()]


def anthropic_sdk() -> Any:
    """The SDK, imported when a test runs, not at collection (its import costs every xdist worker a second or more)."""
    import anthropic

    return anthropic


def anthropic_client(server: Server) -> Any:
    return anthropic_sdk().Anthropic(base_url=_base_url(server), api_key="dummy", max_retries=0)


def test_anthropic_messages_episode_matches_in_process_simlm(server: Server) -> None:
    client = anthropic_client(server)
    user = [{"type": "text", "text": "<system-reminder>context</system-reminder>"},
            {"type": "text", "text": task(TASK).objective}]
    messages: list[dict[str, Any]] = [{"role": "user", "content": user}]

    def step(history: list[Any]) -> tuple[str, str, dict[str, Any]] | None:
        messages[1:] = [m for pair in history for m in pair]
        kwargs = dict(model="sim-base", max_tokens=4096, system=[{"type": "text", "text": SYSTEM}],
                      messages=messages, tools=anthropic_tools())
        reply = client.messages.create(**kwargs)
        with client.messages.stream(**kwargs) as stream:
            streamed = stream.get_final_message()
        assert streamed.model_dump() == reply.model_dump()
        assert reply.usage.input_tokens > 0 and reply.usage.output_tokens > 0
        uses = [b for b in reply.content if b.type == "tool_use"]
        if not uses:
            assert reply.stop_reason == "end_turn"
            return None
        assert reply.stop_reason == "tool_use"
        step.last = reply  # type: ignore[attr-defined]
        return uses[0].id, uses[0].name, uses[0].input

    def result(call_id: str, text: str) -> Any:
        assistant = {"role": "assistant", "content": [b.model_dump() for b in step.last.content]}  # type: ignore[attr-defined]
        return (assistant, {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call_id, "content": [{"type": "text", "text": text}]}]})

    assert drive(step, result) == reference_calls()


def responses_tools() -> list[dict[str, Any]]:
    own = [{"type": "function", "name": "exec_command", "description": "Run a command.",
            "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}}},
           {"type": "web_search"}]
    mcp = [{"type": "function", "name": s["function"]["name"], "description": s["function"]["description"],
            "parameters": s["function"]["parameters"]} for s in make_env(TASK).schemas()]
    return own + [{"type": "namespace", "name": PREFIX.removesuffix("__"), "description": "MCP", "tools": mcp}]


def test_openai_responses_episode_matches_in_process_simlm(server: Server) -> None:
    client = openai.OpenAI(base_url=server.url, api_key="dummy", max_retries=0)
    head = [{"type": "message", "role": "developer", "content": [{"type": "input_text", "text": SYSTEM}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context/>"}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": task(TASK).objective}]}]
    items: list[Any] = list(head)

    def step(history: list[Any]) -> tuple[str, str, dict[str, Any]] | None:
        items[len(head):] = [i for pair in history for i in pair]
        kwargs = dict(model="sim-base", input=items, tools=responses_tools())
        reply = client.responses.create(**kwargs)
        events = list(client.responses.create(**kwargs, stream=True))
        kinds = [e.type for e in events]
        assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
        assert events[-1].response.model_dump() == reply.model_dump()
        assert reply.usage is not None and reply.usage.input_tokens > 0
        calls = [o for o in reply.output if o.type == "function_call"]
        if not calls:
            return None
        assert "response.function_call_arguments.delta" in kinds and "response.output_item.done" in kinds
        deltas = "".join(e.delta for e in events if e.type == "response.function_call_arguments.delta")
        assert deltas == calls[0].arguments
        step.last = calls[0]  # type: ignore[attr-defined]
        assert calls[0].namespace == "mcp__pushbench"  # Codex's namespace for the MCP server's tools
        return calls[0].call_id, f"{calls[0].namespace}__{calls[0].name}", json.loads(calls[0].arguments)

    def result(call_id: str, text: str) -> Any:
        return (step.last.model_dump(exclude_none=True),  # type: ignore[attr-defined]
                {"type": "function_call_output", "call_id": call_id, "output": text})

    assert drive(step, result) == reference_calls()


def test_tools_of_no_known_family_get_a_plain_text_reply(server: Server) -> None:
    a = anthropic_client(server)
    reply = a.messages.create(model="sim-base", max_tokens=100, messages=[{"role": "user", "content": "hi"}],
                              tools=anthropic_tools()[:1])
    assert [b.type for b in reply.content] == ["text"] and reply.stop_reason == "end_turn"
    o = openai.OpenAI(base_url=server.url, api_key="dummy", max_retries=0)
    resp = o.responses.create(model="sim-base", input="hi", tools=responses_tools()[:2])
    assert resp.output_text and not [x for x in resp.output if x.type == "function_call"]


def test_errors_have_each_apis_shape(server: Server) -> None:
    a = anthropic_client(server)
    with pytest.raises(anthropic_sdk().NotFoundError) as missing:
        a.messages.create(model="claude-nonexistent", max_tokens=10, messages=[{"role": "user", "content": "hi"}])
    assert missing.value.body["type"] == "error" and missing.value.body["error"]["type"] == "not_found_error"
    raw = httpx.post(_base_url(server) + "/v1/messages?beta=true", content=b"{not json", timeout=10)
    assert raw.status_code == 400 and raw.json()["error"]["type"] == "invalid_request_error"
    assert set(raw.json()) == {"type", "error"}
    bad = httpx.post(_base_url(server) + "/v1/messages", json={"model": "sim-base", "messages": []}, timeout=10)
    assert bad.status_code == 400 and bad.json()["type"] == "error"
    nowhere = httpx.get(_base_url(server) + "/v1/messages/nope", timeout=10)
    assert nowhere.status_code in (404, 405) and nowhere.json()["type"] == "error"
    o = openai.OpenAI(base_url=server.url, api_key="dummy", max_retries=0)
    with pytest.raises(openai.BadRequestError) as unknown:
        o.responses.create(model="gpt-nonexistent", input="hi")
    assert unknown.value.code == "model_not_found" and unknown.value.param == "model"
    for body in ({"model": "sim-base"}, {"model": "sim-base", "input": [1]}, [], {"model": "sim-base", "input": "x",
                                                                                   "stream": "yes"}):
        r = httpx.post(server.url + "/responses", json=body, timeout=10)
        assert r.status_code == 400 and set(r.json()["error"]) == {"message", "type", "param", "code"}


def test_a_cut_reply_and_token_counting_in_process() -> None:
    client = TestClient(create_app())
    body = {"model": "sim-base", "max_output_tokens": 2, "tools": responses_tools(),
            "input": task(TASK).objective}
    resp = client.post("/v1/responses", json=body).json()
    assert resp["status"] == "incomplete" and resp["incomplete_details"] == {"reason": "max_output_tokens"}
    counted = client.post("/v1/messages/count_tokens?beta=true",
                          json={"model": "sim-base", "messages": [{"role": "user", "content": "hello"}]}).json()
    assert counted["input_tokens"] > 0


# --------------------------------------------------------------------------- chat completions, product mode

def chat_tools(prefix: str) -> list[dict[str, Any]]:
    own = [{"type": "function", "function": {"name": "bash", "description": "Run a shell command.",
                                             "parameters": {"type": "object", "properties": {}}}}]
    return own + [{"type": "function", "function": {**s["function"], "name": prefix + s["function"]["name"]}}
                  for s in make_env(TASK).schemas()]


def test_chat_completions_episode_under_opencodes_names_matches_in_process_simlm(server: Server) -> None:
    client = openai.OpenAI(base_url=server.url, api_key="dummy", max_retries=0)
    prefix = "pushbench_"  # opencode's <server>_<tool>; serve-sim infers the prefix
    head = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "<env>context</env>"},
            {"role": "user", "content": [{"type": "text", "text": task(TASK).objective}]}]
    messages: list[Any] = list(head)

    def step(history: list[Any]) -> tuple[str, str, dict[str, Any]] | None:
        messages[len(head):] = [m for pair in history for m in pair]
        kwargs = dict(model="sim-base", messages=messages, tools=chat_tools(prefix))
        reply = client.chat.completions.create(**kwargs)
        chunks = list(client.chat.completions.create(**kwargs, stream=True))
        streamed = "".join(c.choices[0].delta.tool_calls[0].function.arguments or "" for c in chunks
                           if c.choices and c.choices[0].delta.tool_calls)
        message = reply.choices[0].message
        if not message.tool_calls:
            return None
        assert streamed == message.tool_calls[0].function.arguments
        step.last = message  # type: ignore[attr-defined]
        call = message.tool_calls[0]
        return call.id, call.function.name.replace(prefix, PREFIX, 1), json.loads(call.function.arguments)

    def result(call_id: str, text: str) -> Any:
        return (step.last.model_dump(exclude_none=True),  # type: ignore[attr-defined]
                {"role": "tool", "tool_call_id": call_id, "content": text})

    assert drive(step, result) == reference_calls()


def test_a_request_without_tools_gets_text_on_every_route(server: Server) -> None:
    o = openai.OpenAI(base_url=server.url, api_key="dummy", max_retries=0)
    title = o.chat.completions.create(model="sim-base", messages=[
        {"role": "system", "content": "You are a title generator."}, {"role": "user", "content": "Find tests."}])
    assert title.choices[0].finish_reason == "stop" and title.choices[0].message.content
    assert title.usage.prompt_tokens > 0
    a = anthropic_client(server)
    reply = a.messages.create(model="sim-base", max_tokens=50, messages=[{"role": "user", "content": "a title"}])
    assert [b.type for b in reply.content] == ["text"]
    unknown = httpx.post(server.url + "/chat/completions", timeout=30, json={
        "model": "sim-base", "messages": [{"role": "user", "content": "x"}], "tools": chat_tools("")[:1]})
    assert unknown.status_code == 400 and "no reader" in unknown.json()["error"]["message"]


def _ended_history(prefix: str) -> list[dict[str, Any]]:
    """An episode up to SimLM's ``final`` and the tool result that ends it, as a chat client keeps it."""
    env, sim = make_env(TASK), SimLM("base")
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": task(TASK).objective}]
    while not env.done:
        turn = sim.act(messages, env.schemas(), 0)
        assert turn.call is not None
        obs = env.execute(ToolCall(turn.call.name, json.loads(turn.call.arguments)))
        call = {**turn.message["tool_calls"][0]}
        call["function"] = {**call["function"], "name": prefix + call["function"]["name"]}
        messages += [{**turn.message, "tool_calls": [call]},
                     {"role": "tool", "tool_call_id": turn.call.call_id, "content": obs.text}]
    return messages


@pytest.mark.parametrize("prefix", ["", "pushbench_"])
def test_chat_completions_honour_the_episodes_end(server: Server, prefix: str) -> None:
    """A client that keeps asking after ``final`` (LangGraph's prebuilt ReAct agent over
    ChatOpenAI does, on bare tool names) gets a text reply, as on Messages and Responses."""
    client = openai.OpenAI(base_url=server.url, api_key="dummy", max_retries=0)
    messages = _ended_history(prefix)
    assert "episode ended" in messages[-1]["content"]
    before = server.stats().get("ended", 0)
    tools = make_env(TASK).schemas() if not prefix else chat_tools(prefix)
    reply = client.chat.completions.create(model="sim-base", messages=messages, tools=tools)
    assert reply.choices[0].finish_reason == "stop" and not reply.choices[0].message.tool_calls
    assert server.stats()["ended"] == before + 1


# --------------------------------------------------------------------------- Responses: previous_response_id

def test_previous_response_id_continues_a_stored_response(server: Server) -> None:
    client = openai.OpenAI(base_url=server.url, api_key="dummy", max_retries=0)
    first_input: list[Any] = [{"type": "message", "role": "user",
                               "content": [{"type": "input_text", "text": task(TASK).objective}]}]
    state: dict[str, Any] = {"previous": None, "input": first_input}

    def step(history: list[Any]) -> tuple[str, str, dict[str, Any]] | None:
        kwargs = dict(model="sim-base", instructions=SYSTEM, tools=responses_tools(), input=state["input"])
        if state["previous"]:
            kwargs["previous_response_id"] = state["previous"]
        reply = client.responses.create(**kwargs)
        state["previous"] = reply.id
        calls = [o for o in reply.output if o.type == "function_call"]
        if not calls:
            return None
        return calls[0].call_id, f"{calls[0].namespace}__{calls[0].name}", json.loads(calls[0].arguments)

    def result(call_id: str, text: str) -> Any:
        state["input"] = [{"type": "function_call_output", "call_id": call_id, "output": text}]
        return ()

    assert drive(step, result) == reference_calls()
    for body, param in ([{"previous_response_id": "resp_unknown"}, "previous_response_id"],
                        [{"conversation": "conv_1"}, "conversation"]):
        with pytest.raises(openai.BadRequestError) as refused:
            client.responses.create(model="sim-base", input="hi", **body)
        assert refused.value.param == param and param.split("_")[0] in str(refused.value.message).lower()
