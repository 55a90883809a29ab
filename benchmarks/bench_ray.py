"""Episodes per second of the local and the Ray executor on the same grid, and Ray's cost per episode.

The grid: the first 12 RepoScan tasks (6 flask, 6 requests) x standard/stateqgp x sim/mini x 2
seeds = 48 episodes, on 2 workers each way, each executor cold and warm. Local cold: forked
workers build their own search indexes (what one `pushbench run` does); warm: the parent built
them before forking. Ray runs on a local instance with 2 CPUs: cold (new worker processes import
the package and build their indexes), then warm (the same workers, a new run folder). Also timed: starting the local
instance, and one empty Ray task with the episode's arguments and a result the size of a trace,
round trip (the executor's fixed cost per episode). Both executors' episodes.jsonl must be equal.

    .venv/bin/python benchmarks/bench_ray.py
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

from pushbench import config
from pushbench.runner import Grid, run_grid
from pushbench.runner import ray_exec
from pushbench.runner.grid import EpisodeSpec
from pushbench.tasks import get_family, load_tasks

WORKERS = 2
GRID = Grid("reposcan", ["standard", "stateqgp"], ["sim/mini"], ["full"], ["native"], 2, None, 12,
            int(config.params("seed")))
ROUND_TRIPS = 200


def timed_run(out: Path, executor: str) -> float:
    start = time.perf_counter()
    run_grid(GRID, out, workers=WORKERS, progress=False, wall_time=False, executor=executor)
    return time.perf_counter() - start


def _noop(spec: EpisodeSpec, task: object, hidden: bytes | None) -> tuple[dict, bytes]:
    return {"episode_id": spec.episode_id}, b"\0" * 20_000


def round_trip_ms(ray: object) -> float:
    """One empty task at a time, with an episode's arguments, returning a trace-sized result."""
    task = load_tasks("reposcan")[0]
    spec = EpisodeSpec("reposcan", task.task_id, "standard", "full", "sim/mini", "native", 0)
    hidden = ray.put(ray_exec._hidden_bytes("reposcan", task.task_id))
    remote = ray.remote(_noop).options(num_cpus=1, max_retries=ray_exec.MAX_RETRIES)
    ray.get(remote.remote(spec, task, hidden))
    start = time.perf_counter()
    for _ in range(ROUND_TRIPS):
        ray.get(remote.remote(spec, task, hidden))
    return 1000 * (time.perf_counter() - start) / ROUND_TRIPS


def main() -> None:
    os.environ.pop("RAY_ADDRESS", None)
    n = len(GRID.episodes())
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        local_cold = timed_run(root / "local", "local")
        for task in {t.repo: t for t in GRID.tasks()}.values():  # the parent's search indexes, for forked workers
            get_family("reposcan").environment(task)
        local = timed_run(root / "local-warm", "local")
        start = time.perf_counter()
        with ray_exec.ray_session(WORKERS) as ray:
            started = time.perf_counter() - start
            cold = timed_run(root / "ray-cold", "ray")
            warm = timed_run(root / "ray-warm", "ray")
            noop = round_trip_ms(ray)
        expected = (root / "local" / "episodes.jsonl").read_bytes()
        assert all((root / r / "episodes.jsonl").read_bytes() == expected for r in ("local-warm", "ray-cold", "ray-warm"))
    print(json.dumps({
        "episodes": n, "workers": WORKERS,
        "local_cold_episodes_per_s": round(n / local_cold, 2),
        "local_warm_episodes_per_s": round(n / local, 2),
        "ray_cold_episodes_per_s": round(n / cold, 2),
        "ray_warm_episodes_per_s": round(n / warm, 2),
        "ray_start_s": round(started, 2),
        "ray_minus_local_ms_per_episode_warm": round(1000 * (warm - local) / n, 1),
        "ray_empty_task_round_trip_ms": round(noop, 2),
    }, indent=1))


if __name__ == "__main__":
    main()
