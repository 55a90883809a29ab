"""One episode: build its environment, policy, controller and memory, run it on a backend, and
keep its raw facts (conditions, target, budget, LLM calls, tokens) and its trace.

No metric is computed here: ``pushbench.scoring`` derives every metric from the trace afterwards.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pushbench.registry import BACKENDS, CONTROLLERS, MEMORIES
from pushbench.policies import is_api_model, make_policy
from pushbench.policies.base import ClosablePolicy, MeteredPolicy, Policy
from pushbench.log.models import Trace
from pushbench.log.names import trace_stem
from pushbench.log.traces import write_trace
from pushbench.runner.grid import EpisodeSpec
from pushbench.tasks import get_family
from pushbench.tasks.base import TaskSpec
from pushbench.tools.base import Environment

if TYPE_CHECKING:
    from pushbench.backends.native import EpisodeRun

VERIFIED = "_verified"  # a worker's row carries this for the progress bar; it is not written


def run_episode(spec: EpisodeSpec, task: TaskSpec, master_seed: int, trace_dir: Path | None = None,
                policy_options: dict[str, Any] | None = None, wall_time: bool = True,
                env_options: dict[str, Any] | None = None, meter: Any = None) -> dict[str, Any]:
    """One episode of any policy on its backend. ``env_options``: keyword arguments of the family's
    ``environment`` (the Ray executor's roots); ``meter``: the run's spend meter (API models)."""
    started = time.perf_counter() if wall_time else None
    env = get_family(spec.family).environment(task, **(env_options or {}))
    extra = {"meter": meter} if meter is not None and is_api_model(spec.model) else {}
    policy = make_policy(spec.model, **(policy_options or {}), **extra)
    try:
        run = BACKENDS.load(spec.backend)(env, policy, CONTROLLERS.make(spec.controller),
                                          MEMORIES.make(spec.memory), spec.policy_seed(master_seed),
                                          **backend_options(spec, trace_dir))
    finally:
        if isinstance(policy, ClosablePolicy):  # an API model's HTTP connections
            policy.close()
    return episode_row(spec, task, env, run, policy, started, trace_dir)


@dataclass(frozen=True)
class Unfinished:
    """An episode a run left unwritten (a spend cap, a halted run, an endpoint that kept failing);
    rerunning the grid redoes it."""

    episode_id: str
    reason: str
    detail: str


def backend_options(spec: EpisodeSpec, trace_dir: Path | None) -> dict[str, Any]:
    """A resumable backend (langgraph) checkpoints each episode under the run folder."""
    if trace_dir is None or not BACKENDS.entry(spec.backend).meta.get("resumable", False):
        return {}
    name = trace_stem(spec.episode_id) + ".sqlite"
    return {"checkpoint": trace_dir.parent / "checkpoints" / name, "thread_id": spec.episode_id,
            "remove_when_done": True}


def episode_row(spec: EpisodeSpec, task: TaskSpec, env: Environment, run: EpisodeRun, policy: Policy, started: float | None,
                trace_dir: Path | None) -> dict[str, Any]:
    """The episode's raw facts; its trace too (with the wall time since ``started``, unless None)."""
    row = {"episode_id": spec.episode_id, **asdict(spec), "target": task.target, "budget": task.budget,
           "llm_calls": run.llm_calls, "input_tokens": run.input_tokens, "output_tokens": run.output_tokens,
           VERIFIED: env.verifier.valid_count >= task.target}
    if trace_dir is not None:
        write_trace(trace_dir, Trace(
            spec.episode_id, env.verifier.events, objective=task.objective, messages=run.transcript,
            views=run.views.as_trace(), tool_failures=env.tool_failures or None,
            wall_seconds=round(time.perf_counter() - started, 4) if started is not None else None,
            api=policy.stats.as_dict() if isinstance(policy, MeteredPolicy) else None))
    return row
