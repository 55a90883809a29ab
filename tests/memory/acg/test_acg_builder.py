"""The ``acg`` context builder: layout, budgets, determinism, the clustering it maintains, SimLM episodes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pushbench import guidance as g
from pushbench.memory import make_memory
from pushbench.memory.acg import ACGMemory
from pushbench.memory.acg.builder import VIEW_CAP
from pushbench.memory.acg.entropy import h2
from pushbench.tokens import count_message_tokens

from acg_kit import events, fed

ROOT = Path(__file__).resolve().parents[3]


def test_registered_as_acg() -> None:
    memory = make_memory("acg")
    assert isinstance(memory, ACGMemory) and memory.name == "acg"
    with pytest.raises(ValueError):
        ACGMemory(view_share=1.5)


@pytest.mark.parametrize("window", [3_000, 8_000, 32_000, 10**9])
def test_layout_system_task_view_recent_history_within_the_window(window: int) -> None:
    memory = fed(2, 120)
    messages = memory.render(window)
    assert [m["role"] for m in messages[:3]] == ["system", "user", "user"]
    assert g.ACG_VIEW.match(messages[2]["content"].splitlines()[0])
    recent = messages[3:]
    transcript = memory.messages
    assert recent == transcript[len(transcript) - len(recent):] and recent[0]["role"] == "assistant"
    head = count_message_tokens(messages[:2]) - 3
    room = window - head - (count_message_tokens(recent) - 3)
    assert memory.last.tokens <= min(VIEW_CAP, room)
    assert count_message_tokens(messages) <= window + 3


def test_same_events_give_the_same_view_bytes() -> None:
    a, b = fed(9, 80), fed(9, 80)
    assert json.dumps(a.render(20_000), sort_keys=True) == json.dumps(b.render(20_000), sort_keys=True)


def test_view_bytes_do_not_depend_on_the_process_hash_seed() -> None:
    code = ("import sys, json; sys.path.insert(0, 'tests/helpers'); from acg_kit import fed; "
            "print(json.dumps(fed(3, 60).render(12_000), sort_keys=True))")
    outs = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT / "src")}
        outs.add(subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                                check=True).stdout)
    assert len(outs) == 1


def test_the_maintained_clustering_is_a_greedy_local_optimum_of_the_real_graph() -> None:
    memory = fed(5, 40)
    graph, clusters = memory.graph, memory.clusters
    edges = {(i, j): w for i in range(graph.size) for j, w in graph.neighbours(i).items() if i < j}
    partition = clusters.partition()
    assert sorted(u for m in partition for u in m) == list(range(len(memory.store)))
    assert clusters.merges > 0  # ingest merged incrementally, with no rebuild
    base = h2(edges, partition)
    index = {u: k for k, m in enumerate(partition) for u in m}
    pairs = {tuple(sorted((index[i], index[j]))) for i, j in edges if index[i] != index[j]}
    for a, b in sorted(pairs):
        merged = [m for k, m in enumerate(partition) if k not in (a, b)] + [partition[a] + partition[b]]
        assert h2(edges, merged) - base >= -1e-9


def test_old_traces_without_origins_or_requirements_still_render() -> None:
    memory = fed(1, 30, bind=False)
    view = memory.render(16_000)[2]["content"]
    assert g.ACG_UNASSIGNED in view and not any(g.ACG_REQUIREMENT.match(x) for x in view.splitlines())
    stripped = ACGMemory()
    stripped.start("s", "t")
    for event in events(1, 30):
        event.origin.pop("requirements", None)
        stripped.ingest(event)
    stripped.render(16_000)


def test_a_simlm_episode_runs_and_every_memory_line_is_a_form() -> None:
    from pushbench.backends.native import run_native
    from pushbench.controllers import make_controller
    from pushbench.policies.sim import SimLM

    from agentkit import make_env

    env = make_env()
    seen: list[list[dict]] = []
    policy = SimLM("sim/mini")
    act = policy.act

    def recording(messages, tools, seed):
        seen.append(messages)
        return act(messages, tools, seed)

    policy.act = recording  # type: ignore[method-assign]
    memory = make_memory("acg")
    run_native(env, policy, make_controller("standard"), memory, 3)
    assert env.done and len(memory.store) > 10
    views = [m[2]["content"] for m in seen if len(m) > 2 and str(m[2].get("content", "")).startswith("[memory]")]
    assert views
    for view in views:
        for line in view.splitlines():
            assert g.forms_of(line), line
