"""SimLM's cost per step as the context grows: ms per ``SimLM.act`` at 10k and 100k tokens of context.

A RepoScan episode's traffic (``bench_memory.traffic``: search pages of the ``requests`` snapshot and
submit verdicts, ~700 tokens per observation) goes through a context builder; each step SimLM
(``sim/base`` with a 200k window, so nothing is cut) acts on the builder's view. Only ``act`` is
timed (the builder's own cost is ``bench_memory``'s and ``bench_acg``'s). Two builders:
``full`` (the transcript only grows) and ``acg`` (its decision view, right after the task, changes
every step, so every step rewrites the context before the recent turns). Per builder, the median
ms per step over the steps whose context is within 10% of 10,000 and of 100,000 tokens, over
``SEEDS`` episodes (each a fresh mind), in this thread's CPU time (a shared machine inflates wall time). Target (one core): the 100k cost at most 1.5x the 10k cost.

    taskset -c 0 .venv/bin/python benchmarks/bench_simlm_reading.py
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_acg  # noqa: E402
import bench_memory  # noqa: E402

from pushbench.memory import make_memory  # noqa: E402
from pushbench.memory.base import Event  # noqa: E402
from pushbench.policies.sim import SimLM  # noqa: E402
from pushbench.tasks import get_family, load_tasks  # noqa: E402
from pushbench.tokens import encoding  # noqa: E402

MODEL = "sim/base@200k"
TASK = "reposcan-requests-fixture-n100"  # the objective bench_acg's traffic serves (httpbin tests)
SEEDS = 4
BANDS = (10_000, 100_000)
STEPS = 160  # ~112k tokens of transcript


def feed(memory: Any, pair: tuple[dict[str, Any], dict[str, Any]], step: int) -> None:
    if memory.name == "acg":
        bench_acg.feed(memory, pair, step)
        return
    call, reply = pair
    memory.ingest(Event(step, "action", call))
    memory.ingest(Event(step, "observation", reply, {"tool": call["tool_calls"][0]["function"]["name"]}))


def episode(name: str, seed: int, pairs: list, system: str, objective: str,
            tools: list[dict[str, Any]]) -> list[tuple[int, float]]:
    """(context tokens, CPU seconds of act) per step of one episode (CPU time: the machine may be shared)."""
    memory = make_memory(name)
    memory.start(system, objective)
    if name == "acg":
        memory.bind_requirements(bench_acg.REQUIREMENTS)
    sim = SimLM(MODEL)
    out = []
    for step, pair in enumerate(pairs, start=1):
        feed(memory, pair, step)
        view = list(memory.render(sim.context_window))
        start = time.thread_time()
        turn = sim.act(view, tools, seed)
        out.append((turn.input_tokens, time.thread_time() - start))
    return out


def main() -> None:
    encoding()
    task = next(t for t in load_tasks("reposcan") if t.task_id == TASK)
    env = get_family("reposcan").environment(task)
    tools, system = env.schemas(), "You are an autonomous agent working in a tool environment."
    pairs = bench_acg.traffic(STEPS)
    episode("full", 99, pairs[:20], system, task.objective, tools)  # warm-up: imports, caches
    results: dict[str, Any] = {}
    for name in ("full", "acg"):
        steps = [s for seed in range(SEEDS) for s in episode(name, seed, pairs, system, task.objective, tools)]
        row: dict[str, Any] = {"max_context_tokens": max(t for t, _ in steps)}
        for band in BANDS:
            inside = [1000 * s for t, s in steps if abs(t - band) <= 0.1 * band]
            row[f"ms_per_step_at_{band // 1000}k"] = round(statistics.median(inside), 3) if inside else None
            row[f"steps_at_{band // 1000}k"] = len(inside)
        low, high = (row[f"ms_per_step_at_{b // 1000}k"] for b in BANDS)
        row["ratio_100k_vs_10k"] = round(high / low, 3) if low and high else None
        results[name] = row
    results["target_ratio"] = 1.5
    results["load_average_1min"] = round(os.getloadavg()[0], 2)
    print(json.dumps(results, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
