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
from pushbench.policies.spend import Meter
from pushbench.runner.episode import VERIFIED, Unfinished, run_episode
from pushbench.runner.checks import check_grid
from pushbench.log.models import EpisodeRow
from pushbench.log.names import EPISODES, TRACES
from pushbench.log.rows import append_row, read_done, sort_jsonl
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
             concurrency: int = 8, wall_time: bool = True, executor: str = "local",
             meter: Meter | None = None) -> Path:
    """SimLM episodes run in ``workers`` processes; API models (``openai/*``, ``litellm/*``) run in
    threads, at most ``concurrency`` at once, configured by ``policy_options`` (``ChatOptions``)
    and charged to ``meter`` (its caps halt the run). ``wall_time=False`` keeps wall-clock seconds
    out of the traces (the DVC stages: same bytes on every machine). ``executor="ray"`` runs the
    episodes as Ray tasks instead (``ray_exec``). Returns ``OUT/episodes.jsonl``; raises
    ``RunIncomplete`` (after sorting what finished) when episodes were left unfinished."""
    check_executor(executor)
    tasks = {t.task_id: t for t in check_grid(grid, manifest_root)}  # nothing is written for a bad grid
    meter = meter or Meter()
    with run_lock(out):
        path = out / EPISODES
        left = _append(grid, tasks, path, read_done(path), workers, progress, policy_options, concurrency,
                       wall_time, executor, meter)
        sort_jsonl(path)  # sorted, and one row per episode id (also removes an older run's duplicates)
        record_incomplete(out, left, meter)
    if left:
        raise RunIncomplete(path, left)
    return path


ENDPOINT_FAILURES = 3  # episodes in a row lost to a failing endpoint (after their retries) halt the run


def _append(grid: Grid, tasks: dict[str, TaskSpec], path: Path, done: set[str], workers: int, progress: bool,
            policy_options: dict[str, Any] | None, concurrency: int, wall_time: bool, executor: str,
            meter: Meter) -> list[Unfinished]:
    """Run the missing episodes, appending each finished one; the ones left unfinished."""
    out = path.parent
    todo = [s for s in grid.episodes_of(list(tasks.values())) if s.episode_id not in done]
    # one backend after the other: SimLM acts the same on every backend, so the second backend's
    # episodes find the first one's SWE-lite test runs cached instead of running them concurrently
    todo.sort(key=lambda s: grid.backends.index(s.backend))
    jobs = [(s, tasks[s.task_id], grid.master_seed, str(out / TRACES), wall_time) for s in todo]
    with open(path, "a", encoding="utf-8") as sink, _progress(progress) as bar:
        task_bar = bar.add_task("episodes", total=len(jobs), success="-")
        successes = 0
        local = [job for job in jobs if not is_api_model(job[0].model)]
        remote = [job for job in jobs if is_api_model(job[0].model)]
        results = chain(_results(local, workers), iter_api(remote, concurrency, policy_options or {}, meter)) \
            if executor == "local" else iter_ray_rows(jobs, workers, concurrency, policy_options or {}, meter)
        left: list[Unfinished] = []
        failing = 0  # episodes lost to the endpoint since the last finished one
        for i, row in enumerate(results, 1):
            bar.update(task_bar, advance=1)
            if isinstance(row, Unfinished):
                left.append(row)
                failing = failing + 1 if row.reason == "api_error" else 0
                if failing >= ENDPOINT_FAILURES:
                    meter.halt("endpoint_failing", f"{failing} episodes in a row failed after their retries; "
                               f"the last: {row.detail}")
                continue
            failing = 0
            successes += bool(row.pop(VERIFIED, False))
            append_row(sink, EpisodeRow.from_facts(row), sync=True)
            bar.update(task_bar, success=f"{successes / (i - len(left)):.0%}")
    return left


def iter_api(jobs: list[tuple], concurrency: int, policy_options: dict[str, Any],
             meter: Meter) -> Iterator[dict[str, Any] | Unfinished]:
    if not jobs:
        return iter(())
    from pushbench.runner.api_exec import iter_api_rows

    return iter_api_rows(jobs, concurrency, policy_options, meter)


INCOMPLETE = "incomplete.json"  # why the last run of a folder left episodes unfinished


class RunIncomplete(RuntimeError):
    """A run that stopped before finishing its grid (the finished episodes are written)."""

    def __init__(self, path: Path, left: list[Unfinished]):
        first = left[0]
        super().__init__(f"{len(left)} episode(s) left unfinished ({first.reason}: {first.detail}); "
                         "rerun the same command to finish them (finished episodes and paid calls are kept)")
        self.path, self.left = path, left
        self.reason, self.detail = first.reason, first.detail


def record_incomplete(out: Path, left: list[Unfinished], meter: Meter) -> None:
    """``OUT/incomplete.json`` says why episodes are missing; a run that finishes the grid removes it."""
    target = out / INCOMPLETE
    if not left:
        target.unlink(missing_ok=True)
        return
    halted = meter.halted
    reasons = sorted({u.reason for u in left})
    data = {"unfinished": len(left), "reasons": reasons,
            "cause": {"reason": halted.reason, "detail": halted.detail} if halted else
            {"reason": left[0].reason, "detail": left[0].detail},
            "spent_by_this_run": meter.spend.as_dict(), "episodes": sorted(u.episode_id for u in left)}
    tmp = target.with_name(f".{INCOMPLETE}.tmp")
    tmp.write_text(json.dumps(data, sort_keys=True, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, target)


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
