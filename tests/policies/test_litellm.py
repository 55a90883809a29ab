"""``litellm/<provider>/<model>`` against serve-sim's OpenAI (chat completions) and Anthropic
(Messages) routes: the same caching, retries, usage and tool-call handling as ``openai/*``.
Skipped only when the litellm extra is not installed."""

from __future__ import annotations

import json
from importlib.util import find_spec
from pathlib import Path
from typing import Any, Iterator

import pytest
from typer.testing import CliRunner

from agentkit import data_missing, make_env
from pushbench import config
from pushbench.backends.native import run_native
from pushbench.cli import app
from pushbench.controllers import make_controller
from pushbench.memory import make_memory
from pushbench.policies import make_policy
from pushbench.policies.chat import EndpointError
from pushbench.runner import Grid, run_grid
from pushbench.scoring import score_events, score_run
from serving import ServeSim, serve_sim

# litellm is looked up, not imported, at collection: importing it costs every xdist worker seconds
pytestmark = [pytest.mark.slow, pytest.mark.skipif(find_spec("litellm") is None, reason="litellm is not installed")]
TASK = "reposcan-requests-fixture-n010"


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, ServeSim]]:
    if (reason := data_missing()) is not None:
        pytest.skip(reason)
    logs = tmp_path_factory.mktemp("serve-sim")
    started = {"clean": serve_sim(logs / "clean")}
    try:
        started["faults"] = serve_sim(logs / "faults", "--fault-rate", "0.3", "--fault-delay", "2",
                                      "--retry-after", "0.05", "--seed", "4")
        yield started
    finally:
        for server in started.values():
            server.stop()


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def episode(model: str, base_url: str, **options: Any):
    env = make_env(TASK)
    policy = make_policy(model, base_url=base_url, request_timeout=30, backoff=0.05, **options)
    run = run_native(env, policy, make_controller("gated"), make_memory("full"), 5)
    return env, run, policy


def test_the_openai_route_through_litellm_is_the_openai_provider(servers: dict[str, ServeSim], tmp_path: Path) -> None:
    url = servers["clean"].url
    env, run, policy = episode("litellm/openai/sim-base", url, cache=False)
    ref_env, ref, _ = episode("openai/sim-base", url, cache=False)
    assert run.transcript == ref.transcript and env.verifier.events == ref_env.verifier.events
    assert (run.llm_calls, run.input_tokens, run.output_tokens) == (ref.llm_calls, ref.input_tokens, ref.output_tokens)
    assert policy.name == "litellm/openai/sim-base" and policy.stats.requests == run.llm_calls
    assert policy.stats.input_tokens == run.input_tokens  # usage from the responses


def test_faults_are_retried_and_a_rerun_comes_from_the_cache(servers: dict[str, ServeSim], tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    env, run, policy = episode("litellm/openai/sim-base", servers["faults"].url, cache_dir=cache)
    assert env.done and policy.stats.retries > 0 and policy.stats.requests == run.llm_calls + policy.stats.retries
    again_env, again, cached = episode("litellm/openai/sim-base", servers["faults"].url, cache_dir=cache)
    assert cached.stats.requests == 0 and cached.stats.cache_hits == again.llm_calls == run.llm_calls
    assert again.transcript == run.transcript


def test_an_anthropic_messages_episode_completes_and_scores(servers: dict[str, ServeSim], tmp_path: Path) -> None:
    """The Messages route (as Anthropic's API): LiteLLM translates the tools and the tool results."""
    grid = Grid("reposcan", ["stateqgp"], ["litellm/anthropic/sim-base"], ["full"], ["native"], 1,
                master_seed=int(config.params("seed")), task_ids=(TASK,))
    options = {"base_url": servers["clean"].url.removesuffix("/v1"), "request_timeout": 30, "cache": False}
    run_grid(grid, tmp_path / "run", progress=False, policy_options=options)
    (row,) = [json.loads(line) for line in score_run(tmp_path / "run").read_text().splitlines()]
    assert row["model"] == "litellm/anthropic/sim-base" and row["llm_calls"] > 0 and row["input_tokens"] > 0
    assert row["termination"] in {"final", "give_up", "budget"} and row["steps"] > 0
    assert row["requests"] == row["llm_calls"] and row["valid_count"] > 0  # tool calls reached the environment


def test_the_cli_runs_a_litellm_model_after_checking_it(servers: dict[str, ServeSim], tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["run", "--model", "litellm/openai/sim-base", "--base-url", servers["clean"].url,
                                      "--task", TASK, "--out", str(tmp_path / "o"), "--no-progress",
                                      "--cache-dir", str(tmp_path / "cache")])
    assert result.exit_code == 0, result.output
    unserved = CliRunner().invoke(app, ["run", "--model", "litellm/openai/gpt-9", "--base-url", servers["clean"].url,
                                        "--task", TASK, "--out", str(tmp_path / "x"), "--no-progress"])
    (line,) = unserved.output.splitlines()
    assert unserved.exit_code == 1 and line.startswith("error: litellm/openai/gpt-9: ") and "does not serve" in line
    assert not (tmp_path / "x").exists()


def test_names_and_credentials_are_checked() -> None:
    with pytest.raises(EndpointError, match="litellm/<provider>/<model>"):
        make_policy("litellm/claude-sonnet-4-5")
    with pytest.raises(EndpointError, match="needs credentials: set ANTHROPIC_API_KEY"):
        make_policy("litellm/anthropic/claude-sonnet-4-5")
    env = make_env(TASK)
    assert score_events(env.verifier.events, env.task)["steps"] == 0
