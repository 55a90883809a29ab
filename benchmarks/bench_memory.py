"""Per-step cost of each context builder at 100 and 1,000 events of history.

A step is what the loop asks of a memory each turn: ingest the action and the observation, then
render the view for the model's window. Histories are real RepoScan traffic (search pages of the
``requests`` snapshot and submit verdicts, ~700 tokens per observation), so windows fill and
``memgpt`` evicts and summarises (with a stub model: the summary's own LLM call is the policy's
cost, not the memory's). Target (one core): no memory adds more than 2 ms per step over ``full``
at 1,000 events. Also timed: one archival/conversation search over 1,000 entries (on demand, not
per step).

    taskset -c 0 .venv/bin/python benchmarks/bench_memory.py
"""

from __future__ import annotations

import json
import time
from typing import Any

from pushbench import config
from pushbench.memory import make_memory
from pushbench.memory.base import Event
from pushbench.policies.base import text_message, tool_call_message
from pushbench.tasks.reposcan.search import search_for
from pushbench.tokens import encoding
from pushbench.tools.base import ToolCall
from pushbench.tasks.reposcan.env import render_page

WINDOW = 64_000  # sim/base's window
QUERIES = ["test httpbin", "test get", "test session", "test redirect", "test json", "test auth",
           "test cookies", "test stream", "test proxy", "test headers"]
MEASURED_STEPS = 100


def traffic(n_steps: int) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(assistant call, tool reply) pairs: search pages and submits, like a RepoScan episode."""
    search = search_for(config.SNAPSHOT_SRC / "requests", 50, 10)
    pairs = []
    for i in range(n_steps):
        query, page = QUERIES[(i // 5) % len(QUERIES)], i % 5 + 1
        if i % 3 == 2:
            ids = [h.uid for h in search.page(query, page).hits][:6]
            call = tool_call_message("submit", {"ids": ids}, f"c{i}")
            reply = "submit: 6 accepted, 0 rejected, 0 duplicate\n" + "\n".join(f"  accepted  {u}" for u in ids)
        else:
            call = tool_call_message("search", {"query": query, "page": page}, f"c{i}")
            reply = render_page(search.page(query, page))
        reply += f"\n[{n_steps - i} steps of budget left]"  # no two observations are identical (no cache hits)
        pairs.append((call, {"role": "tool", "tool_call_id": f"c{i}", "content": reply}))
    return pairs


def stub_llm(messages: list[dict[str, Any]], tools: list[dict[str, Any]], purpose: str) -> dict[str, Any]:
    return text_message("progress: 10 accepted of target 100")


def feed(mem: Any, pair: tuple[dict[str, Any], dict[str, Any]], step: int) -> None:
    call, reply = pair
    mem.ingest(Event(step, "action", call))
    mem.ingest(Event(step, "observation", reply, {"tool": call["tool_calls"][0]["function"]["name"]}))


def per_step_ms(name: str, events: int, pairs: list) -> float:
    mem = make_memory(name)
    mem.start("You are an agent.", "Find 100 test functions that take the httpbin fixture.")
    if hasattr(mem, "bind"):
        mem.bind(stub_llm)
    prefill = events // 2
    for step in range(prefill):
        feed(mem, pairs[step], step)
        mem.render(WINDOW)
    start = time.perf_counter()
    for step in range(prefill, prefill + MEASURED_STEPS):
        feed(mem, pairs[step], step)
        mem.render(WINDOW)
    return 1000 * (time.perf_counter() - start) / MEASURED_STEPS


def search_ms(pairs: list) -> dict[str, float]:
    mem = make_memory("memgpt")
    mem.start("You are an agent.", "Find 100 test functions.")
    mem.bind(stub_llm)
    for step in range(500):
        feed(mem, pairs[step], step)
        mem.handle(ToolCall("archival_memory_insert", {"content": pairs[step][1]["content"][:500]}))
    out = {}
    for tool in ("archival_memory_search", "conversation_search"):
        start = time.perf_counter()
        for _ in range(20):
            mem.handle(ToolCall(tool, {"query": "test_redirect_history cookies"}))
        out[f"{tool}_ms_at_1000"] = round(1000 * (time.perf_counter() - start) / 20, 3)
    return out


def main() -> None:
    encoding()
    pairs = traffic(1_000 // 2 + MEASURED_STEPS + 10)
    results: dict[str, Any] = {}
    for events in (100, 1_000):
        row = {name: round(per_step_ms(name, events, pairs), 3) for name in ("full", "memgpt", "langgraph-store")}
        row["added_memgpt"] = round(row["memgpt"] - row["full"], 3)
        row["added_langgraph_store"] = round(row["langgraph-store"] - row["full"], 3)
        results[f"ms_per_step_at_{events}_events"] = row
    results.update(search_ms(pairs))
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
