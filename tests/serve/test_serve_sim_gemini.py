"""serve-sim's Gemini API against the ``google-genai`` SDK's own parser, over a live server.

A RepoScan episode driven through ``models.generate_content`` and ``generate_content_stream``
(``:streamGenerateContent?alt=sse``), with the MCP tools under Gemini CLI's names beside a tool of
its own, makes exactly the calls in-process SimLM makes on the bare tools; streamed answers
assemble to the non-streamed ones; a request without tools gets text; a reply cut at
``maxOutputTokens`` says so; errors come in Google's shape, as the SDK's error classes.
"""

from __future__ import annotations

import json
import time
from typing import Any, Iterator

import httpx
import pytest
from fastapi.testclient import TestClient
from google import genai
from google.genai import errors, types

from agentkit import make_env, task
from pushbench.serve.app import create_app
from test_serve_sim import Server, launch, ready, stop
from test_serve_sim_products import PREFIX, SYSTEM, TASK, drive, reference_calls

GEMINI_PREFIX = "mcp_pushbench_"  # Gemini CLI's mcp_<server>_<tool>


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    started = launch([], tmp_path_factory.mktemp("serve-sim-gemini") / "server.log")
    try:
        assert ready(started, time.monotonic() + 90), started.log.read_text()
        yield started
    finally:
        stop(started)


def client(server: Server) -> genai.Client:
    return genai.Client(api_key="dummy", http_options=types.HttpOptions(base_url=server.url.removesuffix("/v1"),
                                                                        retry_options=None))


def tools() -> list[types.Tool]:
    own = types.FunctionDeclaration(name="run_shell_command", description="Run a command.",
                                    parameters_json_schema={"type": "object", "properties": {"command": {"type": "string"}}})
    mcp = [types.FunctionDeclaration(name=GEMINI_PREFIX + s["function"]["name"],
                                     description=s["function"]["description"],
                                     parameters_json_schema=s["function"]["parameters"])
           for s in make_env(TASK).schemas()]
    return [types.Tool(function_declarations=[own, *mcp])]


def config(**extra: Any) -> types.GenerateContentConfig:
    return types.GenerateContentConfig(system_instruction=SYSTEM, tools=tools(),
                                       automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
                                       **extra)


def test_gemini_episode_matches_in_process_simlm(server: Server) -> None:
    gemini = client(server)
    head = [types.Content(role="user", parts=[types.Part(text="<session_context>context</session_context>"),
                                              types.Part(text=task(TASK).objective)])]
    contents: list[types.Content] = list(head)

    def step(history: list[Any]) -> tuple[str, str, dict[str, Any]] | None:
        contents[len(head):] = [c for pair in history for c in pair]
        reply = gemini.models.generate_content(model="sim-base", contents=contents, config=config())
        chunks = list(gemini.models.generate_content_stream(model="sim-base", contents=contents, config=config()))
        assert chunks[-1].candidates[0].finish_reason == types.FinishReason.STOP
        assert reply.usage_metadata.prompt_token_count > 0 and reply.usage_metadata.candidates_token_count > 0
        streamed = [p for c in chunks for p in c.candidates[0].content.parts]
        if not reply.function_calls:
            assert reply.text and "".join(p.text or "" for p in streamed) == reply.text
            return None
        assert [p.function_call for p in streamed if p.function_call] == reply.function_calls
        call = reply.function_calls[0]
        assert call.name.startswith(GEMINI_PREFIX)  # SimLM answers under the product's name
        step.last = reply.candidates[0].content  # type: ignore[attr-defined]
        return call.name, PREFIX + call.name.removeprefix(GEMINI_PREFIX), dict(call.args)

    def result(call_id: str, text: str) -> Any:
        response = types.Part.from_function_response(name=call_id, response={"output": f"<ctx>\n{text}\n</ctx>"})
        return (step.last, types.Content(role="user", parts=[response]))  # type: ignore[attr-defined]

    assert drive(step, result) == reference_calls()


def test_text_replies_cuts_and_token_counts(server: Server) -> None:
    gemini = client(server)
    hello = gemini.models.generate_content(model="sim-base", contents="a title for this chat")
    assert hello.text and not hello.function_calls
    cut = gemini.models.generate_content(model="sim-base", contents=task(TASK).objective,
                                         config=config(max_output_tokens=2))
    assert cut.candidates[0].finish_reason == types.FinishReason.MAX_TOKENS
    counted = gemini.models.count_tokens(model="sim-base", contents="hello there")
    assert counted.total_tokens > 0


def test_errors_have_googles_shape(server: Server) -> None:
    gemini = client(server)
    with pytest.raises(errors.ClientError) as missing:
        gemini.models.generate_content(model="gemini-nonexistent", contents="hi")
    assert missing.value.code == 404 and missing.value.status == "NOT_FOUND"
    base = server.url.removesuffix("/v1")
    for path, body in (("/v1beta/models/sim-base:generateContent", {"contents": []}),
                       ("/v1beta/models/sim-base:generateContent", {"contents": [{"parts": "x"}]}),
                       ("/v1beta/models/sim-base:nothing", {}), ("/v1beta/nowhere", {})):
        raw = httpx.post(base + path, json=body, timeout=10)
        assert raw.status_code in (400, 404) and set(raw.json()["error"]) == {"code", "message", "status"}


def test_streaming_without_sse_is_a_json_array_of_the_same_chunks() -> None:
    app = TestClient(create_app())
    body = {"contents": [{"role": "user", "parts": [{"text": task(TASK).objective}]}],
            "tools": [{"functionDeclarations": [{"name": GEMINI_PREFIX + s["function"]["name"],
                                                 "parameters": s["function"]["parameters"]}
                                                for s in make_env(TASK).schemas()]}]}
    array = app.post("/v1beta/models/sim-base:streamGenerateContent", json=body).json()
    sse = app.post("/v1beta/models/sim-base:streamGenerateContent?alt=sse", json=body).text
    events = [json.loads(line.removeprefix("data: ")) for line in sse.splitlines() if line.startswith("data: ")]
    assert array == events and array[-1]["candidates"][0]["content"]["parts"][0]["functionCall"]["name"].startswith(
        GEMINI_PREFIX)
