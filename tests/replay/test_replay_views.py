"""The replay rebuilds each call as the live run executed it: for every memory, the views a replay
of a recorded trace renders are the recorded views, byte for byte (schema defaults included)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pushbench.log.names import trace_path
from pushbench.log.traces import read_trace
from pushbench.replay.recall import load_recording, recorded_window
from pushbench.replay.recall.replay import ReplayStats, replay
from pushbench.memory.viewlog import decode_view
from pushbench.registry import MEMORIES
from pushbench.runner.episode import run_episode
from pushbench.runner.grid import EpisodeSpec
from pushbench.tasks import get_family, load_tasks

MODEL = "sim/base@3k"  # a small window: memgpt and summary evict and ask for summaries
TASKS = ("planning-003-shop-l3", "planning-006-trip-d3")  # a cart and a trip plan; their searches leave filters out


@pytest.fixture(scope="module")
def planning() -> dict[str, Any]:
    try:
        tasks = {t.task_id: t for t in load_tasks("planning")}
    except FileNotFoundError as err:
        pytest.skip(str(err))
    return {task_id: tasks[task_id] for task_id in TASKS}


def _dump(view: list[dict[str, Any]]) -> bytes:
    return json.dumps(view, sort_keys=True).encode()


def _left_out_defaults(messages: list[dict[str, Any]], env: Any) -> int:
    """How many calls left out an argument that has a schema default (what the replay must fill in)."""
    count = 0
    for message in messages:
        for call in message.get("tool_calls") or []:
            fn = call["function"]
            spec = env.tools.get(fn["name"])
            if spec is not None:
                defaults = {k for k, v in spec.parameters["properties"].items() if "default" in v}
                count += bool(defaults - set(json.loads(fn["arguments"] or "{}")))
    return count


@pytest.mark.parametrize("memory", MEMORIES.names())
def test_a_replayed_trace_renders_the_recorded_views(memory: str, planning: dict[str, Any], tmp_path: Path) -> None:
    window = recorded_window(MODEL)
    assert window is not None
    for seed, task in enumerate(planning.values()):
        spec = EpisodeSpec("planning", task.task_id, "standard", memory, MODEL, "native", seed)
        row = run_episode(spec, task, 0, tmp_path / "traces", wall_time=False)
        trace = read_trace(trace_path(tmp_path, spec.episode_id))
        assert trace.views is not None and trace.messages is not None
        recorded = [decode_view(s, trace.messages, trace.views["pool"]) for s in trace.views["segments"]]
        env = get_family("planning").environment(task)
        assert _left_out_defaults(trace.messages, env) > 0  # the episode exercises the defaults
        stats = ReplayStats()
        replayed = [turn.view for turn in replay(load_recording(row, trace_path(tmp_path, spec.episode_id), window),
                                                 MEMORIES.make(memory), window, env, stats)]
        assert len(replayed) == len(recorded) > 3
        assert [_dump(v) for v in replayed] == [_dump(v) for v in recorded], (memory, task.task_id)
        assert stats.side_unanswered == 0 and stats.mismatched_replies == 0
