"""The black-box grid as a DVC stage: ``python -m pushbench.harness.pipeline``.

Reads ``blackbox`` from params.yaml, runs the grid through the MCP server and harness in a
temporary folder (episode folders hold launch configs with machine paths), and keeps only the
scored rows in ``data/runs/blackbox/episodes.jsonl``.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from pushbench import config
from pushbench.harness.grid import grid_plans, grid_tasks, run_plans
from pushbench.harness.launcher import EpisodePlan, preflight, resolve_agent


def run_configured(out: Path | None = None) -> Path:
    spec = config.params("blackbox")
    out = out or config.RUNS / "blackbox"
    tasks = grid_tasks(list(spec["targets"]), int(spec["tasks"]), config.MANIFESTS)
    agents = [resolve_agent(name) for name in spec["agents"]]
    base = EpisodePlan(tasks[0], agents[0], "default", float(spec["timeout"]), 0, "stdio", config.DATA,
                       config.SNAPSHOT_SRC)
    plans = grid_plans(tasks, agents, list(spec["prompts"]), int(spec["seeds"]), base)
    for plan in plans:
        preflight(plan)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="pushbench-blackbox-") as work:
        rows = run_plans(plans, Path(work), int(config.params("run.workers")))
        shutil.copyfile(rows, out / "episodes.jsonl")
    return out / "episodes.jsonl"


if __name__ == "__main__":
    print(f"black-box grid -> {run_configured().relative_to(config.ROOT)}")
