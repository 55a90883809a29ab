"""``pushbench serve-sim`` end to end: the real openai client against SimLM over HTTP.

Servers run as subprocesses on free ports (started together, polled until ready, stopped by
process id). Equivalence: an episode through ``openai/sim-base`` is the in-process ``sim/base``
episode, message for message. Faults: with 20% transport faults every episode reaches the same
outcome; malformed tool-call JSON becomes invalid actions. Cache: a rerun sends no request.
"""

from __future__ import annotations

import gzip
import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import httpx
from serving import answers_models
import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from agentkit import make_env, task
from pushbench import config
from pushbench.backends.native import run_native
from pushbench.cli import app
from pushbench.controllers import make_controller
from pushbench.memory import make_memory
from pushbench.scoring import score_events
from pushbench.policies import make_policy
from pushbench.policies.sim import SimLM
from pushbench.runner import Grid, run_grid, trace_name
from pushbench.scoring import score_run
from pushbench.serve.app import MAX_FAULTS_PER_REQUEST, ServeConfig, SimServer, create_app

SERVERS = {
    "clean": [],
    "faults": ["--fault-rate", "0.2", "--fault-delay", "4", "--retry-after", "0.05", "--seed", "3"],
    "malformed": ["--malformed-rate", "0.5", "--seed", "5"],
}
CLIENT = {"request_timeout": 1.5, "backoff": 0.05, "cache": False}


# --------------------------------------------------------------------------- the server processes

@dataclass
class Server:
    proc: subprocess.Popen
    url: str
    log: Path

    def stats(self) -> dict[str, int]:
        return httpx.get(self.url.removesuffix("/v1") + "/sim/stats", timeout=10).json()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def launch(args: list[str], log: Path) -> Server:
    port = free_port()
    with open(log, "wb") as sink:
        proc = subprocess.Popen([sys.executable, "-m", "pushbench.cli", "serve-sim", "--host", "127.0.0.1",
                                 "--port", str(port), *args], stdout=sink, stderr=subprocess.STDOUT)
    return Server(proc, f"http://127.0.0.1:{port}/v1", log)


def ready(server: Server, deadline: float) -> bool:
    return answers_models(server.url, server.proc, deadline - time.monotonic())


def stop(server: Server) -> None:
    if server.proc.poll() is None:
        os.kill(server.proc.pid, signal.SIGTERM)
        try:
            server.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.kill(server.proc.pid, signal.SIGKILL)
            server.proc.wait()


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Server]]:
    logs = tmp_path_factory.mktemp("serve-sim")
    started: dict[str, Server] = {}
    try:
        for name, args in SERVERS.items():
            started[name] = launch(args, logs / f"{name}.log")
        deadline = time.monotonic() + 90
        for name, server in list(started.items()):
            if not ready(server, deadline):  # a port taken meanwhile: one more try on another
                stop(server)
                started[name] = launch(SERVERS[name], logs / f"{name}-2.log")
                assert ready(started[name], time.monotonic() + 60), started[name].log.read_text()
        yield started
    finally:
        for server in started.values():
            stop(server)


@pytest.fixture(autouse=True)
def _no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # a local base URL needs no key
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


# --------------------------------------------------------------------------- the HTTP contract

def test_models_and_completion_format() -> None:
    env = make_env("reposcan-requests-fixture-n010")
    client = TestClient(create_app())
    models = [m["id"] for m in client.get("/v1/models").json()["data"]]
    assert models == ["sim-mini", "sim-base", "sim-pro", "sim-perfect"]
    body = {"model": "sim-pro", "seed": 1, "tools": env.schemas(),
            "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": env.task.objective}]}
    data = client.post("/v1/chat/completions", json=body).json()
    choice = data["choices"][0]
    assert data["object"] == "chat.completion" and data["model"] == "sim-pro" and data["created"] == 0
    assert data["id"].startswith("chatcmpl-") and choice["finish_reason"] == "tool_calls"
    call = choice["message"]["tool_calls"][0]
    assert call["type"] == "function" and call["function"]["name"] == "search"
    assert json.loads(call["function"]["arguments"]) == {"query": "test httpbin", "page": 1}
    usage = data["usage"]
    local = SimLM("pro").act(body["messages"], body["tools"], 1)
    assert (usage["prompt_tokens"], usage["completion_tokens"]) == (local.input_tokens, local.output_tokens)
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"] > 0
    assert client.post("/v1/chat/completions", json=body).json() == data  # same request, same answer


ERROR_FIELDS = ["code", "message", "param", "type"]


@pytest.mark.parametrize("body, status", [
    ({"model": "gpt-9", "messages": [{"role": "user", "content": "x"}]}, 400),
    ({"messages": [{"role": "user", "content": "x"}]}, 400),  # no model
    ({"model": ["sim-base"], "messages": [{"role": "user", "content": "x"}]}, 400),
    ({"model": "sim-base", "messages": []}, 400),
    ({"model": "sim-base", "messages": "hello"}, 400),
    ({"model": "sim-base", "messages": [{"role": "user", "content": "x"}], "tools": "all"}, 400),
    ({"model": "sim-base", "messages": [{"role": "user", "content": "x"}], "seed": "x"}, 400),
    ({"model": "sim-base", "messages": [{"role": "user", "content": "x"}],
      "tools": [{"type": "function", "function": {"name": "bash", "parameters": {}}}]}, 400),  # no reader
    ({"model": "sim-base", "messages": [{"role": "user", "content": "x"}], "stream": "yes"}, 400),
    ({"model": "sim-base", "messages": [{"role": "user", "content": "x"}],
      "stream_options": {"include_usage": True}}, 400),  # stream_options without stream
    ([1, 2], 400),
])
def test_bad_requests_get_openai_style_errors(body: Any, status: int) -> None:
    response = TestClient(create_app()).post("/v1/chat/completions", json=body)
    assert response.status_code == status and response.json()["error"]["message"]
    assert sorted(response.json()["error"]) == ERROR_FIELDS
    assert response.json()["error"]["type"] == "invalid_request_error"


def test_unknown_models_paths_and_methods_get_the_openai_error_shape() -> None:
    client = TestClient(create_app())
    unknown = client.post("/v1/chat/completions", json={"model": "gpt-9", "messages": [{"role": "user",
                                                                                        "content": "x"}]})
    assert unknown.json()["error"] == {"message": unknown.json()["error"]["message"], "param": "model",
                                       "code": "model_not_found", "type": "invalid_request_error"}
    for method, path, status in [("GET", "/v1/nothing", 404), ("POST", "/v1/completions", 404),
                                 ("GET", "/v1/chat/completions", 405), ("DELETE", "/v1/models", 405)]:
        response = client.request(method, path)
        assert response.status_code == status, (method, path)
        assert response.headers["content-type"] == "application/json"
        error = response.json()["error"]
        assert sorted(error) == ERROR_FIELDS and path in error["message"], (method, path, error)
    raw = client.post("/v1/chat/completions", content=b"{not json", headers={"content-type": "application/json"})
    assert raw.status_code == 400 and sorted(raw.json()["error"]) == ERROR_FIELDS


def _requests(env, turns: int = 10) -> list[dict[str, Any]]:
    """Several turns of one episode: the first request and later ones with observations in them."""
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": env.task.objective}]
    bodies, sim = [], SimLM("base")
    for seed in range(turns):
        bodies.append({"model": "sim-base", "seed": seed, "tools": env.schemas(), "messages": list(messages)})
        turn = sim.act(messages, env.schemas(), seed)
        if turn.call is None:
            break
        obs = env.execute(turn.call)
        messages += [turn.message, {"role": "tool", "tool_call_id": turn.call.call_id, "content": obs.text}]
    return bodies


def _assembled(chunks) -> tuple[dict[str, Any], str | None, Any]:
    """A tool-call message put together from stream chunks by hand, as an SDK user would."""
    calls: dict[int, dict[str, Any]] = {}
    content, finish, usage = "", None, None
    for chunk in chunks:
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            finish = choice.finish_reason or finish
            content += choice.delta.content or ""
            for part in choice.delta.tool_calls or []:
                call = calls.setdefault(part.index, {"id": None, "name": "", "arguments": ""})
                call["id"] = part.id or call["id"]
                call["name"] += (part.function.name or "") if part.function else ""
                call["arguments"] += (part.function.arguments or "") if part.function else ""
    return {"content": content, "calls": [calls[i] for i in sorted(calls)]}, finish, usage


@pytest.mark.parametrize("name", ["clean", "malformed"])
def test_streamed_answers_assemble_to_the_non_streamed_ones(servers: dict[str, Server], name: str) -> None:
    """The openai SDK's stream readers, over real SSE on loopback, give the same tool call,
    finish reason and usage as the non-streamed answer (broken arguments included)."""
    import openai

    client = openai.OpenAI(api_key="sk-local", base_url=servers[name].url, max_retries=0, timeout=30)
    bodies = _requests(make_env("reposcan-requests-fixture-n010"))
    assert len(bodies) >= 3
    for body in bodies:
        plain = client.chat.completions.create(**body)
        message = plain.choices[0].message
        want = {"content": message.content or "",
                "calls": [{"id": c.id, "name": c.function.name, "arguments": c.function.arguments}
                          for c in message.tool_calls or []]}
        chunks = list(client.chat.completions.create(**body, stream=True, stream_options={"include_usage": True}))
        assert all(c.object == "chat.completion.chunk" and c.id == plain.id for c in chunks)
        assert chunks[-1].choices == [] and all(c.usage is None for c in chunks[:-1])
        got, finish, usage = _assembled(chunks)
        assert got == want and finish == plain.choices[0].finish_reason
        assert usage.model_dump() == plain.usage.model_dump()
        with client.chat.completions.stream(**body, stream_options={"include_usage": True}) as stream:
            final = stream.get_final_completion()
        helper = final.choices[0].message
        assert [(c.id, c.function.name, c.function.arguments) for c in helper.tool_calls or []] == \
            [(c["id"], c["name"], c["arguments"]) for c in want["calls"]]
        assert final.usage.total_tokens == plain.usage.total_tokens
        no_usage = list(client.chat.completions.create(**body, stream=True))
        assert _assembled(no_usage)[:2] == (want, finish) and all(c.usage is None for c in no_usage)
    if name == "malformed":
        assert servers[name].stats().get("malformed", 0) > 0


def test_a_streamed_text_answer_is_cut_into_content_deltas() -> None:
    from pushbench.serve.stream import completion_chunks

    data = {"id": "chatcmpl-x", "created": 0, "model": "sim-base", "system_fingerprint": "simlm",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "I am done here. " * 5},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 20, "total_tokens": 23}}
    chunks = completion_chunks(data, include_usage=False)
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks)
    assert text == "I am done here. " * 5 and len(chunks) > 3
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop" and "usage" not in chunks[-1]
    raw = TestClient(create_app()).post("/v1/chat/completions", json={
        "model": "sim-base", "stream": True, "messages": [{"role": "user", "content": "x"}],
        "tools": make_env("reposcan-requests-fixture-n010").schemas()})
    assert raw.headers["content-type"].startswith("text/event-stream")
    assert raw.text.endswith("data: [DONE]\n\n") and raw.text.startswith("data: {")


def test_fault_draws_are_seeded_bounded_and_near_the_rate() -> None:
    server, twin = SimServer(ServeConfig(fault_rate=0.5, seed=9)), SimServer(ServeConfig(fault_rate=0.5, seed=9))
    keys = [f"request-{i}" for i in range(400)]
    runs = [[server.fault(k) for _ in range(MAX_FAULTS_PER_REQUEST + 1)] for k in keys]
    assert runs == [[twin.fault(k) for _ in range(MAX_FAULTS_PER_REQUEST + 1)] for k in keys]
    assert all(run[-1] is None for run in runs)  # the attempt after the last allowed fault succeeds
    first = [run[0] for run in runs]
    assert 0.4 < sum(f is not None for f in first) / len(first) < 0.6
    assert {f for f in first if f} == {"rate_limit", "server_error", "timeout"}
    with pytest.raises(ValueError, match="fault-rate"):
        ServeConfig(fault_rate=1.5)


def test_cli_rejects_bad_rates() -> None:
    result = CliRunner().invoke(app, ["serve-sim", "--fault-rate", "-0.1"])
    assert result.exit_code != 0 and "fault-rate" in result.output


# --------------------------------------------------------------------------- end to end

def episode(model: str, task_id: str, controller: str, seed: int = 11, **options: Any):
    env = make_env(task_id)
    policy = make_policy(model, **options)
    run = run_native(env, policy, make_controller(controller), make_memory("full"), seed)
    return env, run, policy


CASES = [("reposcan-requests-fixture-n025", "stateqgp"), ("reposcan-requests-documented-n010", "gated"),
         ("reposcan-requests-calls-n025", "standard")]


@pytest.mark.parametrize("task_id, controller", CASES)
def test_http_episode_equals_in_process_episode(servers: dict[str, Server], task_id: str, controller: str) -> None:
    local_env, local, _ = episode("sim/base", task_id, controller)
    env, run, policy = episode("openai/sim-base", task_id, controller, base_url=servers["clean"].url, **CLIENT)
    assert run.transcript == local.transcript  # identical actions and observations
    assert env.verifier.events == local_env.verifier.events  # identical verified outcome
    counts = lambda r: (r.llm_calls, r.input_tokens, r.output_tokens)  # noqa: E731
    assert counts(run) == counts(local)
    assert policy.stats.requests == run.llm_calls + policy.stats.retries  # a slow machine may time out


def grid(model: str = "openai/sim-base", **kwargs: Any) -> Grid:
    base = dict(family="reposcan", controllers=["standard", "stateqgp"], models=[model], memories=["full"],
                backends=["native"], seeds=1, targets=[10, 25], limit=None, master_seed=int(config.params("seed")))
    return Grid(**{**base, **kwargs})


def requests_only(root: Path) -> Path:
    from pushbench.tasks.base import write_manifest

    tasks = [task(t) for t in ("reposcan-requests-fixture-n010", "reposcan-requests-calls-n025",
                               "reposcan-requests-documented-n010")]
    write_manifest(root / "reposcan.jsonl", tasks)
    return root


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_transport_faults_change_nothing_but_the_retries(servers: dict[str, Server], tmp_path: Path) -> None:
    manifests = requests_only(tmp_path / "m")
    clean = run_grid(grid(), tmp_path / "clean", progress=False, manifest_root=manifests, concurrency=6,
                     policy_options={"base_url": servers["clean"].url, **CLIENT})
    before = servers["faults"].stats()
    faulty = run_grid(grid(), tmp_path / "faulty", progress=False, manifest_root=manifests, concurrency=6,
                      policy_options={"base_url": servers["faults"].url, **CLIENT})
    assert faulty.read_bytes() == clean.read_bytes()  # every episode, same LLM calls and tokens
    scored = [[{k: v for k, v in r.items() if k != "requests"} for r in rows(score_run(path.parent, manifests))]
              for path in (clean, faulty)]
    assert scored[0] == scored[1]  # and the same outcome, metrics and usage but the HTTP attempts
    stats = servers["faults"].stats()
    for kind in ("rate_limit", "server_error", "timeout"):
        assert stats.get(f"fault_{kind}", 0) > before.get(f"fault_{kind}", 0), stats
    retries = 0
    for row in rows(faulty):
        with gzip.open(tmp_path / "faulty" / "traces" / trace_name(row["episode_id"])) as handle:
            api = json.load(handle)["api"]
        retries += api["retries"]
        assert api["requests"] == row["llm_calls"] + api["retries"]
    assert retries >= sum(stats.get(f"fault_{k}", 0) - before.get(f"fault_{k}", 0)
                          for k in ("rate_limit", "server_error", "timeout"))


@pytest.mark.parametrize("controller", ["standard", "stateqgp"])
def test_malformed_json_becomes_invalid_actions(servers: dict[str, Server], controller: str) -> None:
    before = servers["malformed"].stats().get("malformed", 0)
    env, run, policy = episode("openai/sim-base", "reposcan-requests-fixture-n025", controller,
                               base_url=servers["malformed"].url, **CLIENT)
    broken = servers["malformed"].stats().get("malformed", 0) - before
    m = score_events(env.verifier.events, env.task)
    assert env.done and m["termination"] in {"final", "give_up", "budget"}
    assert broken > 0 and m["invalid_actions"] == broken
    errors = [e for e in env.verifier.events if e["kind"] == "call" and not e["ok"]]
    assert all(e["error"].startswith("ERROR: arguments are not valid JSON") for e in errors)


def test_rerun_with_cache_makes_no_request(servers: dict[str, Server], tmp_path: Path) -> None:
    manifests = requests_only(tmp_path / "m")
    options = {"base_url": servers["clean"].url, "cache_dir": tmp_path / "cache", "request_timeout": 30}
    first = run_grid(grid(), tmp_path / "a", progress=False, manifest_root=manifests, policy_options=options)
    sent = servers["clean"].stats().get("requests", 0)
    second = run_grid(grid(), tmp_path / "b", progress=False, manifest_root=manifests, policy_options=options)
    assert servers["clean"].stats().get("requests", 0) == sent  # zero HTTP requests
    assert second.read_bytes() == first.read_bytes()
    assert sum(r["input_tokens"] for r in rows(first)) > 0


def test_resume_runs_only_the_missing_episodes(servers: dict[str, Server], tmp_path: Path) -> None:
    manifests = requests_only(tmp_path / "m")
    options = {"base_url": servers["clean"].url, **CLIENT}
    path = run_grid(grid(), tmp_path / "r", progress=False, manifest_root=manifests, policy_options=options)
    complete = path.read_bytes()
    kept = complete.splitlines(keepends=True)
    path.write_bytes(b"".join(kept[:-2]) + kept[-2][:20])  # two episodes lost, one line torn
    missing = [json.loads(line) for line in kept[-2:]]
    sent = servers["clean"].stats().get("requests", 0)
    run_grid(grid(), tmp_path / "r", progress=False, manifest_root=manifests, policy_options=options)
    assert path.read_bytes() == complete
    assert servers["clean"].stats().get("requests", 0) - sent == sum(r["llm_calls"] for r in missing)


def test_langgraph_backend_with_an_api_model(servers: dict[str, Server], tmp_path: Path) -> None:
    manifests = requests_only(tmp_path / "m")
    options = {"base_url": servers["clean"].url, **CLIENT}
    kw = dict(controllers=["stateqgp"], targets=[10])
    native = run_grid(grid(**kw), tmp_path / "n", progress=False, manifest_root=manifests, policy_options=options)
    graph = run_grid(grid(backends=["langgraph"], **kw), tmp_path / "g", progress=False, manifest_root=manifests,
                     policy_options=options)
    strip = lambda r: {k: v for k, v in r.items() if k not in ("backend", "episode_id")}  # noqa: E731
    native, graph = (score_run(path.parent, manifests) for path in (native, graph))
    assert [strip(r) for r in rows(graph)] == [strip(r) for r in rows(native)]
    assert not list((tmp_path / "g" / "checkpoints").glob("*.sqlite"))  # finished: nothing left to resume


def test_cli_run_against_serve_sim(servers: dict[str, Server], tmp_path: Path) -> None:
    result = CliRunner().invoke(app, [
        "run", "--model", "openai/sim-base", "--controller", "stateqgp", "--target", "10", "--limit", "1",
        "--base-url", servers["clean"].url, "--request-timeout", "30", "--concurrency", "2",
        "--cache-dir", str(tmp_path / "cache"), "--out", str(tmp_path / "run"), "--no-progress"])
    assert result.exit_code == 0, result.output
    (row,) = rows(tmp_path / "run" / "episodes.jsonl")
    assert row["model"] == "openai/sim-base" and row["llm_calls"] > 0 and row["input_tokens"] > 0
    assert list((tmp_path / "cache").rglob("*.json"))


def test_cli_limits_reach_the_server_and_a_cut_reply_is_an_outcome(servers: dict[str, Server], tmp_path: Path) -> None:
    """--max-tokens 2: serve-sim cuts every reply as a real server would; the episode records
    broken calls as invalid actions or ends with ``max_tokens``, and never retries a cut reply."""
    before = servers["clean"].stats()
    result = CliRunner().invoke(app, [
        "run", "--model", "openai/sim-base", "--controller", "gated", "--target", "10", "--limit", "1",
        "--base-url", servers["clean"].url, "--max-tokens", "2", "--context-window", "20000", "--temperature", "0",
        "--cache-dir", str(tmp_path / "cache"), "--out", str(tmp_path / "run"), "--no-progress"])
    assert result.exit_code == 0, result.output
    after = servers["clean"].stats()
    (scored,) = rows(tmp_path / "run" / "scored.jsonl")
    cuts = after.get("length_cuts", 0) - before.get("length_cuts", 0)
    assert scored["termination"] in {"max_tokens", "budget"} and cuts > 0
    assert after["requests"] - before["requests"] == scored["llm_calls"] == cuts  # no retry of a cut reply
    assert not list((tmp_path / "cache").rglob("*.json"))  # cut replies are not cached
    for bad, message in [(["--context-window", "500"], "must exceed max_tokens"), (["--max-tokens", "-1"], "greater than or equal to 0")]:
        failed = CliRunner().invoke(app, ["run", "--model", "openai/sim-base", "--base-url", servers["clean"].url,
                                          *bad, "--out", str(tmp_path / "bad"), "--no-progress"])
        assert failed.exit_code in (1, 2) and message in failed.output, failed.output


def test_an_experiment_in_params_runs_on_an_api_model_through_its_chat_switch(
        servers: dict[str, Server], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`experiments.NAME.chat` (base URL, concurrency, cache...) reaches the chat policy of run_experiment."""
    from pushbench.runner import run_experiment

    spec = {"family": "reposcan", "controllers": ["stateqgp"], "models": ["openai/sim-base"], "memories": ["full"],
            "backends": ["native"], "seeds": 1, "targets": [10], "limit": 1,
            "chat": {"base_url": servers["clean"].url, "concurrency": 2, "request_timeout": 30,
                     "cache_dir": str(tmp_path / "cache")}}
    real = config.params
    monkeypatch.setattr(config, "params", lambda key: spec if key == "experiments.api-grid" else real(key))
    monkeypatch.setattr(config, "RUNS", tmp_path / "runs")
    sent = servers["clean"].stats().get("requests", 0)
    path = run_experiment("api-grid", progress=False)
    (row,) = rows(path)
    assert row["model"] == "openai/sim-base" and row["llm_calls"] > 0
    assert servers["clean"].stats().get("requests", 0) - sent == row["llm_calls"]
    assert list((tmp_path / "cache").rglob("*.json"))  # the cache option arrived
    score_run(path.parent)
    summary = json.loads((tmp_path / "runs" / "api-grid" / "summary.json").read_text())
    assert summary[0]["model"] == "openai/sim-base"
