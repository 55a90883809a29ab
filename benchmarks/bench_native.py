"""Steps per second of the native loop with SimLM, at 100-, 200- and 1,000-step episodes.

Targets (one core): >= 2,000 steps/s at 200-step episodes; per-step cost at 1,000 steps at most
1.5x the cost at 100 steps. Episodes use a real RepoScan task with an unreachable target and the
gated controller, so every episode runs to its full step budget.

    .venv/bin/python benchmarks/bench_native.py
"""

from __future__ import annotations

import json
import time

from pushbench.backends.native import run_native
from pushbench.controllers import make_controller
from pushbench.memory import make_memory
from pushbench.policies.sim import SimLM
from pushbench.tasks import get_family, load_tasks
from pushbench.tokens import encoding
from pushbench.verifier import Verifier

TASK = "reposcan-pytest-documented-n100"  # the largest valid set: searches keep finding items
PROFILE = "sim/base"


def episode_seconds(budget: int, seed: int) -> float:
    base = next(t for t in load_tasks("reposcan") if t.task_id == TASK)
    task = base.model_copy(update={"budget": budget, "target": 10**6})
    env = get_family("reposcan").environment(base)
    env.task, env.verifier = task, Verifier(task.task_id, task.target, env.verifier._accepts)
    start = time.perf_counter()
    run_native(env, SimLM(PROFILE), make_controller("gated"), make_memory("full"), seed)
    elapsed = time.perf_counter() - start
    assert env.steps == budget, (env.steps, budget)
    return elapsed


def main() -> None:
    encoding()
    episode_seconds(50, 0)  # warm the search index, page cache and tokenizer
    results = {}
    for budget, episodes in ((100, 20), (200, 10), (1000, 3)):
        seconds = sum(episode_seconds(budget, seed) for seed in range(episodes))
        results[budget] = {"steps_per_s": round(budget * episodes / seconds, 1),
                           "ms_per_step": round(1000 * seconds / (budget * episodes), 4)}
    results["ratio_1000_vs_100"] = round(results[1000]["ms_per_step"] / results[100]["ms_per_step"], 3)
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
