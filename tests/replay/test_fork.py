"""Counterfactual forks: the replay reproduces the recording (or stops with a clear error), fork rows
are normal rows marked with their parent, and a fork at step 0 is a fresh run of the new condition."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentkit import data_missing, task
from pushbench.cli import app
from pushbench.replay.fork import ForkError, ForkSpec, fork_episode, fork_steps, run_forks
from pushbench.runner.episode import VERIFIED, run_episode
from pushbench.log.models import Trace
from pushbench.log.names import trace_name
from pushbench.log.traces import read_trace as load_trace
from pushbench.runner.grid import EpisodeSpec
from pushbench.viewer.episode import own_tools
from pushbench.viewer.timeline import walk

TASK = "reposcan-flask-fixture-n050"
MASTER = 11


def record(run_dir: Path, memory: str, controller: str = "standard") -> tuple[dict[str, Any], Trace]:
    spec = EpisodeSpec("reposcan", TASK, controller, memory, "sim/mini", "native", 0)
    row = run_episode(spec, task(TASK), MASTER, run_dir / "traces", wall_time=False)
    row.pop(VERIFIED)
    with open(run_dir / "episodes.jsonl", "a", encoding="utf-8") as handle:
        handle.write(json.dumps(row, sort_keys=True) + "\n")
    trace = load_trace(run_dir / "traces" / trace_name(spec.episode_id))
    return row, trace


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, tuple[dict, dict]]]:
    if data_missing():
        pytest.skip(data_missing())
    run_dir = tmp_path_factory.mktemp("fork") / "parent"
    return run_dir, {m: record(run_dir, m) for m in ("full", "memgpt")}


def steps_of(trace: dict[str, Any]) -> int:
    return sum(1 for e in trace.events if e["kind"] == "call")


def prefix_events(events: list[dict[str, Any]], k: int) -> list[dict[str, Any]]:
    return [e for e in events if e["step"] <= k and e["kind"] != "end"]


@pytest.mark.parametrize("memory", ["full", "memgpt"])
def test_replay_reproduces_the_recording_up_to_the_fork(recorded, memory: str) -> None:
    _, runs = recorded
    row, trace = runs[memory]
    k = steps_of(trace) - 1
    spec = ForkSpec(row, k, row["controller"], memory, row["model"])
    fork_row, fork_trace = fork_episode(spec, trace, task(TASK), MASTER)
    assert prefix_events(fork_trace.events, k) == prefix_events(trace.events, k)
    # the transcript up to the k-th observation is the recorded one, memory calls and summaries included
    own = own_tools(memory)
    cut = [t for t in walk(trace.messages, own) if t.step is not None][k - 1].reply + 1
    assert fork_trace.messages[:cut] == trace.messages[:cut]
    assert fork_trace.messages[cut:] != trace.messages[cut:] or steps_of(fork_trace) == steps_of(trace)
    assert fork_row["parent"] == row["episode_id"] and fork_row["fork_step"] == k
    if memory == "memgpt":
        assert any(m.get("tool_calls") and m["tool_calls"][0]["function"]["name"] in own
                   for m in trace.messages[:cut]), "the recorded memory calls were replayed"


def test_a_changed_observation_stops_the_replay(recorded) -> None:
    _, runs = recorded
    row, trace = runs["full"]
    tampered = Trace.from_json(json.loads(json.dumps(trace.as_json())), "a tampered trace")
    tool_replies = [m for m in tampered.messages if m.get("role") == "tool"]
    tool_replies[1]["content"] += "\n(edited)"
    with pytest.raises(ForkError, match="replay diverged at step 2: the observation differs"):
        fork_episode(ForkSpec(row, 3, "stateqgp", "full", row["model"]), tampered, task(TASK), MASTER)


def test_a_fork_at_step_0_is_a_fresh_run_of_the_new_condition(recorded, tmp_path: Path) -> None:
    _, runs = recorded
    row, trace = runs["full"]
    fork_row, fork_trace = fork_episode(ForkSpec(row, 0, "stateqgp", "memgpt", "sim/base"), trace, task(TASK), MASTER)
    fresh_spec = EpisodeSpec("reposcan", TASK, "stateqgp", "memgpt", "sim/base", "native", 0)
    fresh = run_episode(fresh_spec, task(TASK), MASTER, tmp_path, wall_time=False)
    fresh_trace = load_trace(tmp_path / trace_name(fresh_spec.episode_id))
    assert fork_trace.messages == fresh_trace.messages and fork_trace.events == fresh_trace.events
    for key in ("llm_calls", "input_tokens", "output_tokens", "controller", "memory", "model", "seed", "task_id"):
        assert fork_row[key] == fresh[key], key


def test_fork_rows_over_failed_episodes(recorded, tmp_path: Path) -> None:
    from pushbench.scoring import score_run
    from pushbench.viewer import build_site

    run_dir, runs = recorded
    score_run(run_dir)
    scored = [json.loads(line) for line in (run_dir / "scored.jsonl").read_text().splitlines()]
    failed = [r for r in scored if not r["success"]]
    out = tmp_path / "forks"
    if not failed:
        pytest.skip("SimLM succeeded on every recorded episode")
    written = run_forks(run_dir, out, "25%,50%", "stateqgp", None, None, None, MASTER)
    expected = {(r["episode_id"], k) for r in failed for k in fork_steps("25%,50%", r["steps"])}
    rows = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert {(r["parent"], r["fork_step"]) for r in rows} == expected and len(written) == len(expected)
    assert all(r["controller"] == "stateqgp" and r["backend"] == "native" for r in rows)
    assert run_forks(run_dir, out, "25%,50%", "stateqgp", None, None, None, MASTER) == []  # resumed: nothing to do
    score_run(out)
    from pushbench.analysis.forks import fork_table
    from pushbench.scoring import load_episodes

    table = fork_table(load_episodes(out))
    scored_forks = [json.loads(line) for line in (out / "scored.jsonl").read_text().splitlines()]
    assert set(table.fork_at) <= {"25%", "50%"} and table.forks.sum() == len(expected)
    assert table.rescued.sum() == sum(r["success"] for r in scored_forks)
    site = tmp_path / "site"
    build_site([run_dir, out], site)
    index = json.loads((site / "data/index.js").read_text()[len("PB.index("): -3])
    parents = {r[index["columns"].index("parent")] for r in index["rows"]} - {None}
    assert parents == {r["episode_id"] for r in failed}


def test_fork_steps_and_one_line_errors(recorded, tmp_path: Path) -> None:
    run_dir, runs = recorded
    assert fork_steps("25%,50%,75%", 40) == [10, 20, 30] and fork_steps("0,3,3", 9) == [0, 3]
    episode = runs["full"][0]["episode_id"]
    cases = [(["--at", "x%", "--episode", episode], "--at takes step numbers or percentages"),
             (["--at", "9999", "--episode", episode], "--at must be from 0 to"),
             (["--at", "1", "--episode", "nope"], "episode 'nope' is not in"),
             (["--at", "1", "--episode", episode, "--memory", "nosuch"], "nosuch")]
    for extra, message in cases:
        result = CliRunner().invoke(app, ["fork", "--run", str(run_dir), "--controller", "stateqgp",
                                          "--out", str(tmp_path / "o"), *extra])
        assert result.exit_code == 2 and message in result.output, (extra, result.output)
        assert len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "o" / "episodes.jsonl").exists()


def test_memgpt_summaries_are_replayed_from_the_recording(monkeypatch, tmp_path: Path) -> None:
    """At a small window memgpt evicts and asks the model for summaries: the replay answers them
    with the recorded replies (no model call), so the fork's memory holds what the parent's did."""
    if data_missing():
        pytest.skip(data_missing())
    import pushbench.replay.fork
    import pushbench.runner.episode
    from pushbench.policies import make_policy

    def small(model: str, **options: Any):
        policy = make_policy(model, **options)
        policy.context_window = 6000
        return policy

    monkeypatch.setattr(pushbench.runner.episode, "make_policy", small)
    monkeypatch.setattr(pushbench.replay.fork, "make_policy", small)
    tmp_path.mkdir(exist_ok=True)
    row, trace = record(tmp_path, "memgpt")
    k = steps_of(trace) - 1
    cut = [t for t in walk(trace.messages, own_tools("memgpt")) if t.step is not None][k - 1].reply + 1
    summaries = [m for m in trace.messages[:cut] if str(m.get("name", "")).startswith("memory-")]
    assert summaries, "the small window made memgpt summarise before the fork step"
    fork_row, fork_trace = fork_episode(ForkSpec(row, k, "standard", "memgpt", row["model"]), trace, task(TASK), MASTER)
    assert fork_trace.messages[:cut] == trace.messages[:cut]
    assert fork_row["replay_side_calls"] == 0 and fork_row["llm_calls"] < row["llm_calls"]


def test_parents_are_selected_by_controller_and_model_and_capped_evenly() -> None:
    from pushbench.replay.fork import Selection, select_parents

    rows = [{"episode_id": f"e{i:02d}", "controller": c, "model": m, "success": ok}
            for i, (c, m, ok) in enumerate([(c, m, i % 4 == 0) for i in range(40)
                                            for c, m in [(("standard", "gated")[i % 2], ("sim/mini", "sim/base")[i // 20])]])]
    picked = select_parents(rows, Path("r"), Selection("standard", ("sim/mini",)))
    assert picked and all(r["controller"] == "standard" and r["model"] == "sim/mini" and not r["success"] for r in picked)
    capped = select_parents(rows, Path("r"), Selection("standard", None, per_model=3))
    by_model = {m: [r["episode_id"] for r in capped if r["model"] == m] for m in ("sim/mini", "sim/base")}
    assert all(len(ids) == 3 for ids in by_model.values())
    every = select_parents(rows, Path("r"), Selection("standard", ("sim/mini",)))
    assert by_model["sim/mini"] == [r["episode_id"] for r in every][::2][:3]  # spread over the ids, not the first 3
    with pytest.raises(ForkError, match="is not scored"):
        select_parents([{"episode_id": "x"}], Path("r"), Selection())


def test_the_forks_stage_forks_the_configured_failures_and_scores_them(recorded, monkeypatch, tmp_path: Path) -> None:
    import shutil

    import pushbench.config
    from pushbench.replay.fork import stage
    from pushbench.scoring import score_run

    run_dir, _ = recorded
    score_run(run_dir)
    runs = tmp_path / "runs"
    shutil.copytree(run_dir, runs / "parent")
    params = {**pushbench.config.params(), "seed": MASTER, "run": {"workers": 2},
              "forks": {"run": "parent", "from_controller": "standard", "controller": "stateqgp", "at": ["50%"],
                        "models": ["sim/mini"], "per_model": 1}}
    monkeypatch.setattr(pushbench.config, "RUNS", runs)
    monkeypatch.setattr(pushbench.config, "params", lambda key=None: params if key is None else
                        __import__("functools").reduce(lambda node, part: node[part], key.split("."), params))
    failed = [json.loads(line) for line in (run_dir / "scored.jsonl").read_text().splitlines()]
    failed = [r for r in failed if not r["success"]]
    if not failed:
        pytest.skip("SimLM succeeded on every recorded episode")
    out = stage()
    scored = [json.loads(line) for line in (out / "scored.jsonl").read_text().splitlines()]
    assert len(scored) == 1 and (out / "episodes.jsonl").is_file()  # per_model: 1
    for row in scored:
        assert row["parent"] in {r["episode_id"] for r in failed} and row["fork_at"] == "50%"
        assert row["controller"] == "stateqgp" and "success" in row
