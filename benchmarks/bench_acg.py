"""ACG's costs: ingest per event, view build p50/p95 at 200, 2,000 and 20,000 events, clustering at 2,000 units.

Histories are real RepoScan traffic (``bench_memory.traffic``: search pages of the ``requests``
snapshot and submit verdicts, every call's origin naming the task's requirements), so a search page
gives ~11 units and a submit ~7; 40 queries of 5 pages, so most units are distinct up to 2,000 events
(at 20,000 the pages come round again: a unit then has many occurrences). Targets (one core): a
view build at most 5 ms p50 at 200 events, 30 ms at 2,000 events and 20 ms at 20,000 events. "View build" is the render call: retrieval, requirement views and the
budgeted rendering (the recent-history trim is included; SimLM is not). Clustering maintenance is
the structural-entropy settle of each ingest, timed on its own, with the unit count it reaches.
Wall and CPU (this thread's) times are both reported: on a shared machine the wall time includes
waiting for a core, so the load average is printed too.

    taskset -c 0 .venv/bin/python benchmarks/bench_acg.py
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

import bench_memory  # noqa: E402

from pushbench.memory.acg import ACGMemory  # noqa: E402
from pushbench.memory.base import Event  # noqa: E402
from pushbench.requirements import Requirement  # noqa: E402
from pushbench.tokens import encoding  # noqa: E402

WINDOW = 64_000
TASK = "Find 100 test functions that take the httpbin fixture."
REQUIREMENTS = [Requirement("count", "100 distinct test functions accepted", "count"),
                Requirement("distinct", "no function submitted twice", "distinct"),
                Requirement("predicate", "test functions that take the httpbin fixture", "predicate")]
MEASURED = 60  # renders timed per history length
WORDS = ["httpbin", "get", "session", "redirect", "json", "auth", "cookies", "stream", "proxy", "headers", "post",
         "timeout", "adapter", "retry", "url", "params", "encoding", "hooks", "ssl", "cert", "chunked", "upload",
         "files", "digest", "basic", "status", "history", "response", "request", "prepare", "mount", "close",
         "iter", "content", "text", "raw", "links", "host", "port", "idna"]


def traffic(steps: int) -> list:
    """``bench_memory``'s traffic over 40 queries instead of 10 (so thousands of distinct units exist)."""
    saved = bench_memory.QUERIES
    bench_memory.QUERIES = [f"test {w}" for w in WORDS]
    try:
        return bench_memory.traffic(steps)
    finally:
        bench_memory.QUERIES = saved


def origin_ids(call: dict[str, Any]) -> list[str]:
    name = call["tool_calls"][0]["function"]["name"]
    return ["count", "distinct"] if name == "submit" else ["predicate"]


def feed(memory: ACGMemory, pair: tuple[dict[str, Any], dict[str, Any]], step: int) -> float:
    """Ingest one step (action and observation); returns the seconds the observation's ingest took."""
    call, reply = pair
    fn = call["tool_calls"][0]["function"]
    memory.ingest(Event(step, "action", call))
    start = time.perf_counter()
    memory.ingest(Event(step, "observation", reply, {"tool": fn["name"], "arguments": json.loads(fn["arguments"]),
                                                     "call_id": call["tool_calls"][0]["id"],
                                                     "requirements": origin_ids(call)}))
    return time.perf_counter() - start


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def timed_settle(memory: ACGMemory) -> list[float]:
    """Wrap the clustering's settle to time it on its own."""
    clusters, spent = memory.clusters, []
    settle = clusters.settle

    def timed() -> int:
        start = time.perf_counter()
        merges = settle()
        spent.append(time.perf_counter() - start)
        return merges

    clusters.settle = timed  # type: ignore[method-assign]
    return spent


def run(events: int, pairs: list) -> dict[str, Any]:
    memory = ACGMemory()
    memory.start("You are an agent.", TASK)
    memory.bind_requirements(REQUIREMENTS)
    settles = timed_settle(memory)
    steps = events // 2
    ingest = [feed(memory, pairs[i], i + 1) for i in range(steps - MEASURED)]
    renders, cpu = [], []
    for i in range(steps - MEASURED, steps):
        ingest.append(feed(memory, pairs[i], i + 1))
        start, start_cpu = time.perf_counter(), time.thread_time()
        memory.render(WINDOW)
        renders.append(time.perf_counter() - start)
        cpu.append(time.thread_time() - start_cpu)
    ms, cpu_ms = [1000 * x for x in renders], [1000 * x for x in cpu]
    return {"events": events, "units": len(memory.store), "modules": len(memory.clusters.modules),
            "ingest_ms_per_observation_mean": round(1000 * statistics.fmean(ingest), 3),
            "ingest_ms_per_event_mean": round(1000 * sum(ingest) / events, 3),
            "view_build_ms_p50": round(percentile(ms, 0.5), 3), "view_build_ms_p95": round(percentile(ms, 0.95), 3),
            "view_build_cpu_ms_p50": round(percentile(cpu_ms, 0.5), 3),
            "view_build_cpu_ms_p95": round(percentile(cpu_ms, 0.95), 3),
            "view_tokens_last": memory.last.tokens,
            "clustering_ms_per_observation_mean": round(1000 * statistics.fmean(settles), 3),
            "clustering_ms_total": round(1000 * sum(settles), 1)}


def clustering_at(units: int, pairs: list) -> dict[str, Any]:
    """Ingest until ``units`` units exist; the settle time per observation over the last 100 observations."""
    memory = ACGMemory()
    memory.start("You are an agent.", TASK)
    memory.bind_requirements(REQUIREMENTS)
    settles = timed_settle(memory)
    step = 0
    while len(memory.store) < units and step < len(pairs):
        feed(memory, pairs[step], step + 1)
        step += 1
    tail = [1000 * x for x in settles[-100:]]
    return {"units": len(memory.store), "observations": step, "merges": memory.clusters.merges,
            "settle_ms_p50_last_100": round(percentile(tail, 0.5), 3),
            "settle_ms_p95_last_100": round(percentile(tail, 0.95), 3)}


def main() -> None:
    encoding()
    pairs = traffic(10_000)
    run(2 * MEASURED + 20, pairs)  # warm-up: imports, the tokenizer's and the hasher's caches
    results = {f"at_{n}_events": run(n, pairs) for n in (200, 2_000, 20_000)}
    results["clustering_at_2000_units"] = clustering_at(2_000, pairs)
    results["targets_ms_p50"] = {"at_200_events": 5.0, "at_2000_events": 30.0, "at_20000_events": 20.0}
    results["load_average_1min"] = round(os.getloadavg()[0], 2)  # wall times inflate on a loaded machine
    print(json.dumps(results, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
