"""Forks on the LangGraph backend: the recording is replayed into a fresh checkpointer and the fork
branches that checkpoint history at step K (``pushbench.replay.fork_langgraph``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentkit import data_missing, task
from pushbench.replay.fork import ForkError, ForkSpec, fork_episode, run_forks
from pushbench.runner.episode import VERIFIED, run_episode
from pushbench.log.models import Trace
from pushbench.log.names import trace_name
from pushbench.log.traces import read_trace as load_trace
from pushbench.runner.grid import EpisodeSpec
from pushbench.viewer.episode import own_tools
from pushbench.viewer.timeline import walk

TASK = "reposcan-flask-fixture-n050"
MASTER = 11


def record(run_dir: Path, spec: EpisodeSpec) -> tuple[dict[str, Any], dict[str, Any]]:
    row = run_episode(spec, task(TASK), MASTER, run_dir / "traces", wall_time=False)
    row.pop(VERIFIED)
    with open(run_dir / "episodes.jsonl", "a", encoding="utf-8") as handle:
        handle.write(json.dumps(row, sort_keys=True) + "\n")
    return row, read_trace(run_dir / "traces", spec.episode_id)


def read_trace(folder: Path, episode_id: str) -> dict[str, Any]:
    return load_trace(folder / trace_name(episode_id))


@pytest.fixture(scope="module")
def parent(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    if data_missing():
        pytest.skip(data_missing())
    run_dir = tmp_path_factory.mktemp("lgfork")
    spec = EpisodeSpec("reposcan", TASK, "standard", "memgpt", "sim/mini", "langgraph", 0)
    return (run_dir, *record(run_dir, spec))


def steps_of(trace: dict[str, Any]) -> int:
    return sum(1 for e in trace.events if e["kind"] == "call")


def cut_at(trace: dict[str, Any], memory: str, k: int) -> int:
    return [t for t in walk(trace.messages, own_tools(memory)) if t.step is not None][k - 1].reply + 1


def test_the_checkpoint_replay_reproduces_the_recording_and_the_fork_is_marked(parent) -> None:
    _, row, trace = parent
    k = steps_of(trace) - 1
    spec = ForkSpec(row, k, row["controller"], row["memory"], row["model"], backend="langgraph")
    fork_row, fork_trace = fork_episode(spec, trace, task(TASK), MASTER)
    cut = cut_at(trace, "memgpt", k)
    assert fork_trace.messages[:cut] == trace.messages[:cut]  # memgpt's own calls included
    assert [e for e in fork_trace.events if e["step"] <= k and e["kind"] != "end"] == \
        [e for e in trace.events if e["step"] <= k and e["kind"] != "end"]
    assert fork_row["backend"] == "langgraph" and fork_row["parent"] == row["episode_id"]
    assert fork_row["fork_step"] == k and fork_trace.fork_step == k and "|langgraph|" in fork_row["episode_id"]


def test_a_changed_observation_stops_the_checkpoint_replay(parent) -> None:
    _, row, trace = parent
    tampered = Trace.from_json(json.loads(json.dumps(trace.as_json())), "a tampered trace")
    [m for m in tampered.messages if m.get("role") == "tool"][2]["content"] += "\n(edited)"
    spec = ForkSpec(row, 5, "stateqgp", row["memory"], row["model"], backend="langgraph")
    with pytest.raises(ForkError, match="replay diverged at step 3: the checkpointed transcript differs"):
        fork_episode(spec, tampered, task(TASK), MASTER)


def test_a_fork_at_step_0_is_a_fresh_langgraph_run_of_the_new_condition(parent, tmp_path: Path) -> None:
    _, row, trace = parent
    spec = ForkSpec(row, 0, "stateqgp", "full", "sim/base", backend="langgraph")
    fork_row, fork_trace = fork_episode(spec, trace, task(TASK), MASTER)
    fresh_spec = EpisodeSpec("reposcan", TASK, "stateqgp", "full", "sim/base", "langgraph", 0)
    fresh = run_episode(fresh_spec, task(TASK), MASTER, tmp_path, wall_time=False)
    fresh_trace = read_trace(tmp_path, fresh_spec.episode_id)
    assert fork_trace.messages == fresh_trace.messages and fork_trace.events == fresh_trace.events
    for key in ("llm_calls", "input_tokens", "output_tokens", "controller", "memory", "model", "seed", "backend"):
        assert fork_row[key] == fresh[key], key


def test_a_langgraph_parent_forks_on_langgraph_and_both_backends_agree(parent, tmp_path: Path) -> None:
    run_dir, row, trace = parent
    k = steps_of(trace) // 2
    written = run_forks(run_dir, tmp_path / "lg", str(k), "stateqgp", "full", None, row["episode_id"], MASTER)
    native = run_forks(run_dir, tmp_path / "nat", str(k), "stateqgp", "full", None, row["episode_id"], MASTER,
                       backend="native")
    assert len(written) == len(native) == 1 and "|langgraph|" in written[0] and "|native|" in native[0]
    lg, nat = read_trace(tmp_path / "lg" / "traces", written[0]), read_trace(tmp_path / "nat" / "traces", native[0])
    assert lg.messages == nat.messages and lg.events == nat.events
    with pytest.raises(ForkError, match="--backend must be native or langgraph"):
        run_forks(run_dir, tmp_path / "x", "1", "stateqgp", None, None, row["episode_id"], MASTER, backend="ray")
