"""The black-box grid as a DVC stage: ``python -m pushbench.harness.pipeline``.

Reads ``blackbox`` from params.yaml, runs the grid through the MCP server and harness in a work
folder under ``data/tmp`` (episode folders hold launch configs with machine paths), and keeps only
the scored rows in ``data/runs/blackbox/episodes.jsonl``. The work folder is named by a
fingerprint of the params and of the package's source, so a killed stage resumes with the
episodes it finished, and a run of other code or params never mixes in.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from pushbench import config
from pushbench.harness.grid import grid_plans, grid_tasks, run_plans
from pushbench.harness.launcher import EpisodePlan, preflight, resolve_agent
from pushbench.log.names import EPISODES


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
    work = config.DATA / "tmp" / f"blackbox-{fingerprint(spec)}"
    for stale in work.parent.glob("blackbox-*"):
        if stale != work:
            shutil.rmtree(stale, ignore_errors=True)
    rows = run_plans(plans, work, int(config.params("run.workers")), fork_server=True)
    shutil.copyfile(rows, out / EPISODES)
    shutil.rmtree(work, ignore_errors=True)
    return out / EPISODES


def fingerprint(spec: dict) -> str:
    """Params, master seed, the RepoScan manifest and every source file of the package: what the
    grid's rows depend on."""
    digest = hashlib.sha256(json.dumps([spec, config.params("seed")], sort_keys=True).encode())
    digest.update((config.MANIFESTS / "reposcan.jsonl").read_bytes())
    package = Path(__file__).resolve().parents[1]
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


if __name__ == "__main__":
    print(f"black-box grid -> {run_configured().relative_to(config.ROOT)}")
