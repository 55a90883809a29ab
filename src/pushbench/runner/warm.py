"""Warm-up before the worker processes fork: what every episode would load once per process.

The tokenizer's vocabulary, the registered backends, controllers, memories and policies (and their
imports: LangGraph), and each family's shared
indexes (``warm(tasks)``: RepoScan's code search, the corpus index, the planning world, the SWE
snapshots' bytecode and fork-server probe) are built
once in the parent; the forked workers inherit them instead of each building its own. Everything
warmed is a cache of a pure function of its inputs, so episodes are the same bytes either way.
"""

from __future__ import annotations

from typing import Any, Iterable

from pushbench import tokens
from pushbench.policies import is_api_model, make_policy
from pushbench.registry import BACKENDS, CONTROLLERS, MEMORIES
from pushbench.runner.grid import EpisodeSpec
from pushbench.tasks import get_family
from pushbench.tasks.base import TaskSpec, WarmFamily


def warm_up(jobs: Iterable[tuple[EpisodeSpec, TaskSpec, Any, Any, Any]]) -> None:
    """Load, in this process, what the SimLM episodes of ``jobs`` share (runner job tuples)."""
    specs: list[EpisodeSpec] = []
    tasks: dict[str, dict[str, TaskSpec]] = {}
    for spec, task, *_ in jobs:
        specs.append(spec)
        tasks.setdefault(spec.family, {})[task.task_id] = task
    if not specs:
        return
    tokens.encoding()
    for backend in sorted({s.backend for s in specs}):
        BACKENDS.load(backend)
    for controller in sorted({s.controller for s in specs}):
        CONTROLLERS.make(controller)
    for memory in sorted({s.memory for s in specs}):
        MEMORIES.make(memory)
    for model in sorted({s.model for s in specs if not is_api_model(s.model)}):
        make_policy(model)
    for family, family_tasks in sorted(tasks.items()):
        found = get_family(family)
        if isinstance(found, WarmFamily):
            found.warm(list(family_tasks.values()))
