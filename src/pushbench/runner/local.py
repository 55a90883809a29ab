"""Run a grid of episodes in parallel, append-only and resumable.

Each finished episode becomes one JSON line of raw facts in ``OUT/episodes.jsonl`` (written by the
parent process, one ``write`` + ``fsync`` per line) and one gzip trace in ``OUT/traces/``. A rerun
skips episodes already in the file and drops a torn last line, so a killed run resumes without
losing or duplicating episodes; at the end the file is rewritten sorted with one row per episode
id, so it is byte-identical to an uninterrupted run. The grid is checked before anything is
written (``checks``), and a lock on the folder keeps a second run out while one writes (``lock``). Wall-clock data goes to traces only. Metrics come later, from the traces
(``pushbench.scoring.score_run``).
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
from itertools import chain
from pathlib import Path
from typing import Any, Iterator

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from pushbench.policies import is_api_model
from pushbench.runner.episode import VERIFIED, run_episode
from pushbench.runner.checks import check_grid
from pushbench.runner.files import read_done, sort_jsonl
from pushbench.runner.lock import run_lock
from pushbench.runner.grid import EpisodeSpec, Grid
from pushbench.runner.ray_exec import check_executor, iter_ray_rows
from pushbench.runner.warm import warm_up
from pushbench.tasks.base import TaskSpec


def _worker(job: tuple[EpisodeSpec, TaskSpec, int, str, bool]) -> dict[str, Any]:
    spec, task, master, trace_dir, wall_time = job
    return run_episode(spec, task, master, Path(trace_dir), wall_time=wall_time)


def run_grid(grid: Grid, out: Path, workers: int = 1, progress: bool = True,
             manifest_root: Path | None = None, policy_options: dict[str, Any] | None = None,
             concurrency: int = 8, wall_time: bool = True, executor: str = "local") -> Path:
    """SimLM episodes run in ``workers`` processes; API models (``openai/*``) run as async tasks,
    at most ``concurrency`` at once, configured by ``policy_options`` (``ChatOptions``).
    ``wall_time=False`` keeps wall-clock seconds out of the traces (the DVC stages: same bytes on
    every machine). ``executor="ray"`` runs the episodes as Ray tasks instead (``ray_exec``).
    Returns ``OUT/episodes.jsonl``."""
    check_executor(executor)
    tasks = {t.task_id: t for t in check_grid(grid, manifest_root)}  # nothing is written for a bad grid
    with run_lock(out):
        path = out / "episodes.jsonl"
        _append(grid, tasks, path, read_done(path), workers, progress, policy_options, concurrency, wall_time,
                executor)
        sort_jsonl(path)  # sorted, and one row per episode id (also removes an older run's duplicates)
    return path


def _append(grid: Grid, tasks: dict[str, TaskSpec], path: Path, done: set[str], workers: int, progress: bool,
            policy_options: dict[str, Any] | None, concurrency: int, wall_time: bool, executor: str) -> None:
    out = path.parent
    todo = [s for s in grid.episodes_of(list(tasks.values())) if s.episode_id not in done]
    # one backend after the other: SimLM acts the same on every backend, so the second backend's
    # episodes find the first one's SWE-lite test runs cached instead of running them concurrently
    todo.sort(key=lambda s: grid.backends.index(s.backend))
    jobs = [(s, tasks[s.task_id], grid.master_seed, str(out / "traces"), wall_time) for s in todo]
    with open(path, "a", encoding="utf-8") as sink, _progress(progress) as bar:
        task_bar = bar.add_task("episodes", total=len(jobs), success="-")
        successes = 0
        local = [job for job in jobs if not is_api_model(job[0].model)]
        remote = [job for job in jobs if is_api_model(job[0].model)]
        results = chain(_results(local, workers), iter_async(remote, concurrency, policy_options or {})) \
            if executor == "local" else iter_ray_rows(jobs, workers, concurrency, policy_options or {})
        for i, row in enumerate(results, 1):
            successes += bool(row.pop(VERIFIED, False))
            sink.write(json.dumps(row, sort_keys=True) + "\n")
            sink.flush()
            os.fsync(sink.fileno())
            bar.update(task_bar, advance=1, success=f"{successes / i:.0%}")


def iter_async(jobs: list[tuple], concurrency: int, policy_options: dict[str, Any]) -> Iterator[dict[str, Any]]:
    if not jobs:
        return iter(())
    from pushbench.runner.async_exec import iter_async_rows

    return iter_async_rows(jobs, concurrency, policy_options)


def _results(jobs: list[tuple], workers: int) -> Iterator[dict[str, Any]]:
    if workers <= 1 or len(jobs) <= 1:
        yield from map(_worker, jobs)
        return
    warm_up(jobs)  # once here, not once per worker
    with mp.get_context("fork").Pool(workers) as pool:
        yield from pool.imap_unordered(_worker, jobs, chunksize=1)
        pool.close()  # the workers end normally, so their exit hooks run (idle SWE workspaces are removed)
        pool.join()


def _progress(enabled: bool) -> Progress:
    return Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TextColumn("verified success so far {task.fields[success]}"), TimeRemainingColumn(),
                    disable=not enabled)
