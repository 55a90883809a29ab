"""The parity check of the one loop: a grid of ``openai/sim-base`` episodes through serve-sim over
HTTP against the same episodes of in-process SimLM (profile ``base``) at the same seeds.

Every memory runs on one short task of every family SimLM can play (``rows`` has no SimLM mind).
Both sides see a context window of ``WINDOW`` tokens (the HTTP side as ``context_window`` with no
``max_tokens`` to reserve; the in-process side as the policy's window), small enough that the
``summary`` and ``memgpt`` memories ask the model for summaries and ``memgpt`` edits its blocks.
SimLM's own attention is the profile's on both sides. The reference uses the API grid's episode
specs, so its rows and traces are those the runner would write for them: everything must match
byte for byte except each trace's ``api`` block (HTTP attempts and retries, only the client has).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pushbench import config
from pushbench.log.models import EpisodeRow
from pushbench.log.rows import row_line, sort_jsonl
from pushbench.log.traces import read_trace
from pushbench.policies.sim import SimLM
from pushbench.registry import BACKENDS, CONTROLLERS, MEMORIES
from pushbench.runner import Grid
from pushbench.runner.episode import backend_options, episode_row
from pushbench.tasks import get_family, load_tasks

TASKS = {"reposcan": "reposcan-flask-documented-n010", "dataops": "dataops-n03-b2", "swe": "swe-flask-n2-a",
         "corpus": "corpus-002-c4", "planning": "planning-002-shop-l2", "sweissues": "sweissues-flask-h1-03"}
MEMORY_NAMES = ["full", "summary", "memgpt", "langgraph-store", "acg"]
WINDOW = 4000
MODEL = "openai/sim-base"
MEMORY_TOOLS = {"core_memory_append", "core_memory_replace", "archival_memory_insert", "archival_memory_search",
                "conversation_search"}


def grids(backend: str, families: list[str] | None = None) -> list[Grid]:
    seed = int(config.params("seed"))
    return [Grid(family, ["standard"], [MODEL], MEMORY_NAMES, [backend], 1, master_seed=seed, task_ids=(TASKS[family],))
            for family in families or list(TASKS)]


def http_options(url: str) -> dict[str, Any]:
    return {"base_url": url, "context_window": WINDOW, "max_tokens": 0, "cache": False, "request_timeout": 60}


def reference(grid_list: list[Grid], out: Path) -> Path:
    """The grids' episodes with in-process SimLM, written as the runner writes them."""
    rows = []
    for grid in grid_list:
        tasks = {t.task_id: t for t in load_tasks(grid.family) if t.task_id in grid.task_ids}
        for spec in grid.episodes():
            task = tasks[spec.task_id]
            env = get_family(spec.family).environment(task)
            sim = SimLM("base")
            sim.context_window = WINDOW
            run = BACKENDS.load(spec.backend)(env, sim, CONTROLLERS.make(spec.controller), MEMORIES.make(spec.memory),
                                              spec.policy_seed(grid.master_seed),
                                              **backend_options(spec, out / "traces"))
            row = episode_row(spec, task, env, run, sim, None, out / "traces")
            row.pop("_verified")
            rows.append(row_line(EpisodeRow.from_facts(row)))
    path = out / "episodes.jsonl"
    path.write_text("".join(rows), encoding="utf-8")
    sort_jsonl(path)
    return path


def contents(run: Path) -> dict[str, Any]:
    """A run folder's rows (bytes) and traces (decoded, without the client's ``api`` block)."""
    out: dict[str, Any] = {"episodes.jsonl": (run / "episodes.jsonl").read_bytes()}
    for path in sorted((run / "traces").iterdir()):
        trace = read_trace(path).as_json()
        trace.pop("api", None)
        out[path.name] = trace
    return out


def exercised(run: Path) -> dict[str, int]:
    """How much of the memory machinery the episodes used (so the check cannot pass vacuously)."""
    counts = {"summaries": 0, "memory_calls": 0, "views": 0}
    for path in (run / "traces").iterdir():
        trace = read_trace(path)
        counts["summaries"] += sum(str(m.get("name", "")).startswith("memory-") for m in trace.transcript)
        calls = [c["function"]["name"] for m in trace.transcript for c in (m.get("tool_calls") or [])]
        counts["memory_calls"] += sum(name in MEMORY_TOOLS for name in calls)
        counts["views"] += len(trace.views or [])
    return counts
