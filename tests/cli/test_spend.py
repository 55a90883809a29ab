"""A researcher's money: the endpoint check before the first call, spend caps that stop a run
cleanly and a rerun that pays for nothing twice, usage at the end, endpoint failures recorded
instead of crashing the grid, and ``experiment --model --out`` on a real-model path. Against
``serve-sim`` over HTTP (SimLM, not a real model)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, Iterator

import pytest
from typer.testing import CliRunner

from agentkit import data_missing
from pushbench import config
from pushbench.cli import app
from pushbench.policies.spend import Meter
from pushbench.prices import PriceTable, load_prices
from pushbench.runner import Grid, RunIncomplete, run_grid
from serving import ServeSim, serve_sim

pytestmark = pytest.mark.slow
TASKS = "reposcan-requests-calls-n010,reposcan-requests-documented-n010,reposcan-requests-fixture-n010"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeSim]:
    if (reason := data_missing()) is not None:
        pytest.skip(reason)
    sim = serve_sim(tmp_path_factory.mktemp("serve-sim") / "log")
    try:
        yield sim
    finally:
        sim.stop()


@pytest.fixture(autouse=True)
def _no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def prices(tmp_path: Path) -> Path:
    path = tmp_path / "prices.yaml"
    path.write_text("as_of: test\nmodels:\n  sim-base: {input: 10.0, cached_input: 1.0, output: 20.0}\n")
    return path


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app, [*args])


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.is_file() else []


def run_args(server: ServeSim, tmp_path: Path, out: str, *extra: str) -> list[str]:
    return ["run", "--model", "openai/sim-base", "--controller", "standard,stateqgp", "--task", TASKS,
            "--base-url", server.url, "--request-timeout", "30", "--concurrency", "1",
            "--cache-dir", str(tmp_path / "cache"), "--out", str(tmp_path / out), "--no-progress",
            "--prices", str(prices(tmp_path)), *extra]


# --------------------------------------------------------------------------- before the first call

def test_a_missing_key_is_one_line_before_anything_runs(tmp_path: Path) -> None:
    result = invoke("run", "--model", "openai/gpt-4o-mini", "--out", str(tmp_path / "o"))
    assert result.exit_code == 1 and result.output.splitlines() == [
        "error: openai/gpt-4o-mini needs an API key: set OPENAI_API_KEY (a local server given with --base-url "
        "needs none)"]
    assert not (tmp_path / "o").exists()


def test_a_model_the_endpoint_does_not_serve_is_one_line(server: ServeSim, tmp_path: Path) -> None:
    result = invoke("run", "--model", "openai/gpt-9", "--base-url", server.url, "--out", str(tmp_path / "o"))
    (line,) = result.output.splitlines()
    assert result.exit_code == 1 and line.startswith("error: openai/gpt-9: ") and "bug" not in line
    assert "does not serve a model 'gpt-9'; it serves sim-base, sim-mini, sim-perfect, sim-pro" in line
    assert not (tmp_path / "o").exists()


# --------------------------------------------------------------------------- caps and resume

def test_a_cost_cap_stops_cleanly_and_the_rerun_pays_for_nothing_twice(server: ServeSim, tmp_path: Path) -> None:
    before = server.stats().get("requests", 0)
    capped = invoke(*run_args(server, tmp_path, "run", "--max-cost", "0.3"))  # reached inside the third episode
    assert capped.exit_code == 3, capped.output
    assert "stopped: the --max-cost cap of $0.30 is reached" in capped.stderr and "Traceback" not in capped.output
    assert "this run: " in capped.stderr and "at list prices" in capped.stderr
    done = rows(tmp_path / "run" / "episodes.jsonl")
    record = json.loads((tmp_path / "run" / "incomplete.json").read_text())
    assert 0 < len(done) < 6 and record["unfinished"] == 6 - len(done)
    assert record["cause"]["reason"] == "max_cost" and record["spent_by_this_run"]["cost"] >= 0.3
    traces = sorted(p.name for p in (tmp_path / "run" / "traces").iterdir())
    assert len(traces) == len(done)  # no trace of an unfinished episode: nothing half-written
    paid = server.stats()["requests"] - before
    assert paid == record["spent_by_this_run"]["requests"]

    rest = invoke(*run_args(server, tmp_path, "run"))
    assert rest.exit_code == 0, rest.output
    final = rows(tmp_path / "run" / "episodes.jsonl")
    assert len(final) == 6 and not (tmp_path / "run" / "incomplete.json").exists()
    assert {r["episode_id"] for r in done} <= {r["episode_id"] for r in final}
    # every model call of the grid was paid for exactly once over the two runs (a clean server: no retries)
    assert server.stats()["requests"] - before == sum(r["llm_calls"] for r in final)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert sum(s["cache_hits"] for s in summary) > 0  # the calls the capped run had paid inside an episode
    assert all(s["cost_usd"] > 0 for s in summary)  # at the --prices table's prices


def test_a_token_cap_stops_too(server: ServeSim, tmp_path: Path) -> None:
    result = invoke(*run_args(server, tmp_path, "tok", "--max-total-tokens", "1"))
    assert result.exit_code == 3 and "the --max-total-tokens cap of 1 is reached" in result.stderr
    assert json.loads((tmp_path / "tok" / "incomplete.json").read_text())["unfinished"] == 6
    assert rows(tmp_path / "tok" / "episodes.jsonl") == []


def test_usage_is_printed_and_kept_in_summary_json(server: ServeSim, tmp_path: Path) -> None:
    result = invoke(*run_args(server, tmp_path, "u"), "--format", "markdown")
    assert result.exit_code == 0, result.output
    assert "| llm_calls |" in result.stdout.replace("  ", " ") or "llm_calls" in result.stdout
    assert "requests" in result.stdout and "cached_tokens" in result.stdout and "cost_usd" in result.stdout
    summary = json.loads((tmp_path / "u" / "summary.json").read_text())
    for record in summary:
        assert record["requests"] >= record["llm_calls"] > 0 and record["input_tokens"] > 0
        assert {"cache_hits", "cached_tokens", "output_tokens", "cost_usd"} <= set(record)
    listing = invoke("summarize", str(tmp_path / "u"), "--json")
    assert [r["llm_calls"] for r in json.loads(listing.output)] == [r["llm_calls"] for r in summary]


# --------------------------------------------------------------------------- failures mid-run

def test_an_endpoint_that_keeps_failing_is_recorded_not_a_crash(tmp_path: Path) -> None:
    """Every attempt fails (serve-sim at fault rate 1 with one retry allowed): episodes are left
    unfinished with the cause, three in a row halt the run, and nothing is written for them."""
    failing = serve_sim(tmp_path / "log", "--fault-rate", "1", "--fault-delay", "0.1", "--retry-after", "0.01")
    try:
        grid = Grid("reposcan", ["standard", "stateqgp"], ["openai/sim-base"], ["full"], ["native"], 1,
                    master_seed=int(config.params("seed")), task_ids=tuple(TASKS.split(",")))
        options = {"base_url": failing.url, "max_retries": 1, "backoff": 0.01, "request_timeout": 5, "cache": False}
        with pytest.raises(RunIncomplete) as stop:
            run_grid(grid, tmp_path / "f", progress=False, policy_options=options, concurrency=2)
    finally:
        failing.stop()
    record = json.loads((tmp_path / "f" / "incomplete.json").read_text())
    assert stop.value.reason == "api_error" and "gave up after 2 attempts" in stop.value.detail
    assert record["unfinished"] == 6 and record["cause"]["reason"] == "endpoint_failing"
    assert rows(tmp_path / "f" / "episodes.jsonl") == []


def test_the_meter_counts_and_caps() -> None:
    table = PriceTable({"m": load_prices().lookup("openai/gpt-4o-mini")})
    meter = Meter(max_cost=0.001, prices=table)
    meter.admit()
    meter.charge("openai/m", 5000, 100, cached_tokens=1000)
    assert meter.spend.cost == pytest.approx((4000 * 0.15 + 1000 * 0.075 + 100 * 0.60) / 1e6)
    meter.charge("openai/unknown", 10, 10)
    assert meter.spend.unpriced == ["openai/unknown"] and meter.spend.responses == 2
    meter.charge("openai/m", 10_000, 0)
    from pushbench.policies.spend import RunHalted

    with pytest.raises(RunHalted, match="max_cost"):
        meter.admit()
    assert meter.spend.requests == 1


# --------------------------------------------------------------------------- experiments on a real model

def test_an_experiment_runs_on_another_model_into_its_own_folder(server: ServeSim, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    spec = {"family": "reposcan", "controllers": ["stateqgp"], "models": ["sim/mini"], "memories": ["full"],
            "backends": ["native"], "seeds": 1, "targets": [10], "limit": 2}
    real = config.params
    monkeypatch.setattr(config, "params", lambda key=None, path=None: (
        {"tiny": spec} if key == "experiments" else spec if key == "experiments.tiny" else real(key, path)))
    out = tmp_path / "tiny-real"
    dry = invoke("experiment", "tiny", "--model", "openai/sim-base", "--out", str(out), "--dry-run")
    assert dry.exit_code == 0 and dry.output.startswith("ESTIMATE, not a measurement") and not out.exists()
    result = invoke("experiment", "tiny", "--model", "openai/sim-base", "--base-url", server.url, "--out", str(out),
                    "--request-timeout", "30", "--cache-dir", str(tmp_path / "cache"), "--no-progress")
    assert result.exit_code == 0, result.output
    assert {r["model"] for r in rows(out / "scored.jsonl")} == {"openai/sim-base"} and len(rows(out / "scored.jsonl")) == 2
    assert json.loads((out / "experiment.json").read_text())["experiment"] == "tiny"
    assert "this run: " in result.stderr
    assert invoke("summarize", str(out)).exit_code == 0


# --------------------------------------------------------------------------- the estimate

def test_the_estimate_takes_recorded_episodes_then_the_family_model(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Recorded sim/base episodes stand in for an API model, seed by seed, then as a mean over
    seeds; the rest come from the family model. The RepoScan main grid is estimated in < 10 s."""
    import time

    from pushbench.runner.estimate import estimate, family_model, window_of
    from pushbench.runner.experiment import experiment_grid

    configured = experiment_grid("reposcan-main", ["openai/gpt-4o-mini"])
    grid = dataclasses.replace(configured, seeds=3)  # three seeds, whatever params.yaml runs
    tasks = grid.tasks()
    first, second = tasks[0], tasks[1]
    run = tmp_path / "runs" / "recorded"
    run.mkdir(parents=True)
    rows_ = [{"family": "reposcan", "task_id": first.task_id, "controller": c, "memory": "full", "model": "sim/base",
              "seed": s, "llm_calls": 10 + s, "input_tokens": 1000 * (s + 1), "output_tokens": 50}
             for c in grid.controllers for s in range(3)]
    rows_ += [{"family": "reposcan", "task_id": second.task_id, "controller": "standard", "memory": "full",
               "model": "sim/base", "seed": 0, "llm_calls": 4, "input_tokens": 400, "output_tokens": 40}]
    (run / "episodes.jsonl").write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows_))
    (result,) = estimate(grid, tasks, load_prices(), runs=tmp_path / "runs").models
    model, window = family_model("reposcan"), window_of("openai/gpt-4o-mini", {})
    expected_rest = sum(model.episode(t.budget, window)[0] for t in tasks for _ in grid.controllers
                        for _ in range(3)) - sum(model.episode(first.budget, window)[0] for _ in range(9)) \
        - sum(model.episode(second.budget, window)[0] for _ in range(3))
    assert result.episodes == len(tasks) * 3 * 3 and result.recorded == 9 + 3
    assert result.llm_calls == pytest.approx(3 * (10 + 11 + 12) + 3 * 4 + expected_rest)
    assert result.cost_usd == pytest.approx(load_prices().lookup("openai/gpt-4o-mini").cost(
        round(result.input_tokens), round(result.output_tokens)))

    monkeypatch.setattr(config, "RUNS", tmp_path / "none")
    started = time.process_time()
    out = invoke("estimate", "reposcan-main", "--model", "openai/gpt-4o-mini")
    assert out.exit_code == 0 and time.process_time() - started < 10
    assert out.output.startswith(f"ESTIMATE, not a measurement: reposcan, {len(configured.episodes())} episodes")
    assert "from the per-family model (params.yaml estimate.families.reposcan)" in out.output
