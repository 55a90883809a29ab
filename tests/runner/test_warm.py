"""The runner's warm-up before forking: each family's shared state once, nothing for no jobs."""

from __future__ import annotations

from typing import Any

import pytest

from pushbench import tokens
from pushbench.runner import warm
from pushbench.runner.grid import EpisodeSpec
from pushbench.tasks.base import TaskSpec


def _task(task_id: str, family: str) -> TaskSpec:
    return TaskSpec(task_id=task_id, family=family, objective="o", target=1, budget=5, tools=["final"],
                    oracle_steps=1)


def _job(task: TaskSpec, memory: str = "full", model: str = "sim/mini") -> tuple[Any, ...]:
    spec = EpisodeSpec(task.family, task.task_id, "standard", memory, model, "native", 0)
    return (spec, task, 0, "traces", False)


class _Family:
    def __init__(self) -> None:
        self.warmed: list[list[str]] = []

    def warm(self, tasks: list[TaskSpec]) -> None:
        self.warmed.append([t.task_id for t in tasks])


def test_warm_up_warms_each_family_once_with_its_distinct_tasks(monkeypatch: pytest.MonkeyPatch) -> None:
    families = {"a": _Family(), "b": _Family(), "c": object()}  # "c" has no warm hook: skipped
    monkeypatch.setattr(warm, "get_family", families.__getitem__)
    a1, a2, b1, c1 = _task("a1", "a"), _task("a2", "a"), _task("b1", "b"), _task("c1", "c")
    warm.warm_up([_job(a1), _job(a1, model="sim/pro"), _job(a2), _job(b1, memory="memgpt"), _job(c1)])
    assert families["a"].warmed == [["a1", "a2"]]
    assert families["b"].warmed == [["b1"]]
    assert tokens.encoding.cache_info().currsize == 1  # the vocabulary is loaded in this process


def test_warm_up_of_no_jobs_loads_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_args: Any) -> None:
        raise AssertionError("nothing to warm for no jobs")

    monkeypatch.setattr(warm, "get_family", refuse)
    monkeypatch.setattr(warm.tokens, "encoding", refuse)
    warm.warm_up([])


def test_reposcan_warm_builds_the_search_the_environment_then_uses() -> None:
    from pushbench.tasks import load_tasks
    from pushbench import config
    from pushbench.tasks.reposcan.family import RepoScanFamily, snapshot_dir

    task = next(t for t in load_tasks("reposcan") if t.repo == "requests")
    family = RepoScanFamily()
    family.warm([task])
    from pushbench.tasks.reposcan.search import search_for

    before = search_for.cache_info()
    env = family.environment(task)
    after = search_for.cache_info()
    assert (after.hits, after.misses) == (before.hits + 1, before.misses)  # built by warm, not again
    assert env.search_index is search_for(snapshot_dir(task.repo, config.SNAPSHOT_SRC),
                                          task.settings["max_results"], task.settings["page_size"])


def test_planning_and_corpus_warm_build_what_their_environments_share() -> None:
    from pushbench.tasks import get_family, load_tasks
    from pushbench.tasks.corpus import family as corpus_family
    from pushbench.tasks.planning.world import WorldParams, build_world

    planning = load_tasks("planning")[:3]
    get_family("planning").warm(planning)
    before = build_world.cache_info()
    env = get_family("planning").environment(planning[0])
    assert build_world.cache_info().hits == before.hits + 1
    assert env.world is build_world(WorldParams(**planning[0].settings["world"]))

    corpus = load_tasks("corpus")[:1]
    get_family("corpus").warm(corpus)
    index = corpus_family._INDEX["index"]
    assert get_family("corpus").environment(corpus[0]).index is index
