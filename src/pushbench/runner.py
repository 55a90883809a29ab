"""Run a grid of episodes in parallel, append-only and resumable.

Each finished episode becomes one JSON line in ``OUT/episodes.jsonl`` (written by the parent
process, one ``write`` + ``fsync`` per line) and one gzip trace in ``OUT/traces/``. A rerun skips
episodes already in the file and drops a torn last line, so a killed run resumes without losing or
duplicating episodes; at the end the file is rewritten sorted, so it is byte-identical to an
uninterrupted run. Wall-clock data goes to traces only.
"""

from __future__ import annotations

import gzip
import json
import multiprocessing as mp
import os
import re
import time
import zlib
from dataclasses import asdict, dataclass
from itertools import chain
from pathlib import Path
from typing import Any, Iterator

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from pushbench.backends import BACKENDS
from pushbench.controllers import make_controller
from pushbench.memory import make_memory
from pushbench.metrics import episode_metrics, unit_metrics
from pushbench.policies import is_api_model, make_policy
from pushbench.tasks import get_family, load_tasks
from pushbench.tasks.base import TaskSpec


@dataclass(frozen=True)
class EpisodeSpec:
    family: str
    task_id: str
    controller: str
    memory: str
    model: str
    backend: str
    seed: int

    @property
    def episode_id(self) -> str:
        return "|".join([self.task_id, self.controller, self.memory, self.model, self.backend, f"s{self.seed}"])

    def policy_seed(self, master: int) -> int:
        """Randomness shared by every controller/memory on the same task, model and seed (paired)."""
        return zlib.crc32(f"{master}:{self.task_id}:{self.model}:{self.seed}".encode())


@dataclass(frozen=True)
class Grid:
    family: str
    controllers: list[str]
    models: list[str]
    memories: list[str]
    backends: list[str]
    seeds: int
    targets: list[int] | None = None
    limit: int | None = None
    master_seed: int = 0

    def tasks(self, manifest_root: Path | None = None) -> list[TaskSpec]:
        tasks = [t for t in load_tasks(self.family, manifest_root)
                 if not self.targets or t.target in self.targets]
        return tasks[: self.limit] if self.limit else tasks

    def episodes(self, manifest_root: Path | None = None) -> list[EpisodeSpec]:
        return [EpisodeSpec(self.family, t.task_id, c, m, model, b, s)
                for t in self.tasks(manifest_root) for c in self.controllers for m in self.memories
                for model in self.models for b in self.backends for s in range(self.seeds)]


def run_episode(spec: EpisodeSpec, task: TaskSpec, master_seed: int, trace_dir: Path | None = None,
                policy_options: dict[str, Any] | None = None, wall_time: bool = True) -> dict[str, Any]:
    started = time.perf_counter() if wall_time else None
    env = get_family(spec.family).environment(task)
    policy = make_policy(spec.model, **(policy_options or {}))
    run = BACKENDS[spec.backend](env, policy, make_controller(spec.controller), make_memory(spec.memory),
                                 spec.policy_seed(master_seed), **backend_options(spec, trace_dir))
    return episode_row(spec, task, env, run, policy, started, trace_dir)


def backend_options(spec: EpisodeSpec, trace_dir: Path | None) -> dict[str, Any]:
    """A resumable backend (langgraph) checkpoints each episode under the run folder."""
    if trace_dir is None or not getattr(BACKENDS[spec.backend], "resumable", False):
        return {}
    name = trace_name(spec.episode_id).removesuffix(".json.gz") + ".sqlite"
    return {"checkpoint": trace_dir.parent / "checkpoints" / name, "thread_id": spec.episode_id,
            "remove_when_done": True}


def episode_row(spec: EpisodeSpec, task: TaskSpec, env: Any, run: Any, policy: Any, started: float | None,
                trace_dir: Path | None) -> dict[str, Any]:
    """The episode's row; its trace too (with the wall time since ``started``, unless None)."""
    row = {"episode_id": spec.episode_id, **asdict(spec), "target": task.target, "budget": task.budget,
           **episode_metrics(env.verifier.events, task.target, task.budget),
           "llm_calls": run.llm_calls, "input_tokens": run.input_tokens, "output_tokens": run.output_tokens}
    if "units" in task.settings:  # work-unit families (DataOps-lite, SWE-lite)
        row.update(unit_metrics(env.verifier.events, task.settings["units"]))
    if trace_dir is not None:
        write_trace(trace_dir, spec, {"episode_id": spec.episode_id, "objective": task.objective,
                                      "messages": run.transcript, "events": env.verifier.events,
                                      **({"wall_seconds": round(time.perf_counter() - started, 4)}
                                         if started is not None else {}),
                                      **({"api": policy.stats.as_dict()} if hasattr(policy, "stats") else {})})
    return row


def trace_name(episode_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", episode_id) + ".json.gz"


def write_trace(trace_dir: Path, spec: EpisodeSpec, trace: dict[str, Any]) -> None:
    trace_dir.mkdir(parents=True, exist_ok=True)
    final = trace_dir / trace_name(spec.episode_id)
    tmp = final.with_suffix(".tmp")
    with open(tmp, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz:
        gz.write(json.dumps(trace, sort_keys=True, default=str).encode())
    os.replace(tmp, final)


def read_done(path: Path) -> set[str]:
    """Episode ids already recorded; a torn last line (killed mid-write) is dropped."""
    if not path.exists():
        return set()
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        data = data[: data.rfind(b"\n") + 1]
        path.write_bytes(data)
    return {json.loads(line)["episode_id"] for line in data.decode().splitlines() if line.strip()}


def _worker(job: tuple[EpisodeSpec, TaskSpec, int, str, bool]) -> dict[str, Any]:
    spec, task, master, trace_dir, wall_time = job
    return run_episode(spec, task, master, Path(trace_dir), wall_time=wall_time)


def run_grid(grid: Grid, out: Path, workers: int = 1, progress: bool = True,
             manifest_root: Path | None = None, policy_options: dict[str, Any] | None = None,
             concurrency: int = 8, wall_time: bool = True) -> Path:
    """SimLM episodes run in ``workers`` processes; API models (``openai/*``) run as async tasks,
    at most ``concurrency`` at once, configured by ``policy_options`` (``ChatOptions``).
    ``wall_time=False`` keeps wall-clock seconds out of the traces (the DVC stages: same bytes on
    every machine)."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / "episodes.jsonl"
    done = read_done(path)
    tasks = {t.task_id: t for t in grid.tasks(manifest_root)}
    todo = [s for s in grid.episodes(manifest_root) if s.episode_id not in done]
    # one backend after the other: SimLM acts the same on every backend, so the second backend's
    # episodes find the first one's SWE-lite test runs cached instead of running them concurrently
    todo.sort(key=lambda s: grid.backends.index(s.backend))
    jobs = [(s, tasks[s.task_id], grid.master_seed, str(out / "traces"), wall_time) for s in todo]
    with open(path, "a", encoding="utf-8") as sink, _progress(progress) as bar:
        task_bar = bar.add_task("episodes", total=len(jobs), success="-")
        successes = 0
        local = [job for job in jobs if not is_api_model(job[0].model)]
        remote = [job for job in jobs if is_api_model(job[0].model)]
        results = chain(_results(local, workers), iter_async(remote, concurrency, policy_options or {}))
        for i, row in enumerate(results, 1):
            sink.write(json.dumps(row, sort_keys=True) + "\n")
            sink.flush()
            os.fsync(sink.fileno())
            successes += row["success"]
            bar.update(task_bar, advance=1, success=f"{successes / i:.0%}")
    sort_jsonl(path)
    return path


def iter_async(jobs: list[tuple], concurrency: int, policy_options: dict[str, Any]) -> Iterator[dict[str, Any]]:
    if not jobs:
        return iter(())
    from pushbench.runner_async import iter_async_rows

    return iter_async_rows(jobs, concurrency, policy_options)


def _results(jobs: list[tuple], workers: int) -> Iterator[dict[str, Any]]:
    if workers <= 1 or len(jobs) <= 1:
        yield from map(_worker, jobs)
        return
    with mp.get_context("fork").Pool(workers) as pool:
        yield from pool.imap_unordered(_worker, jobs, chunksize=1)


def _progress(enabled: bool) -> Progress:
    return Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TextColumn("success so far {task.fields[success]}"), TimeRemainingColumn(),
                    disable=not enabled)


def sort_jsonl(path: Path) -> None:
    lines = sorted(line for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    os.replace(tmp, path)


def run_experiment(name: str, workers: int | None = None, progress: bool = True) -> Path:
    """The DVC stage for ``experiments.NAME`` of params.yaml: episodes, traces and summary.json."""
    from pushbench import config
    from pushbench.metrics import load_episodes, summarize

    spec = config.params(f"experiments.{name}")
    out = config.RUNS / name
    grid = Grid(spec["family"], spec["controllers"], spec["models"], spec["memories"], spec["backends"],
                int(spec["seeds"]), spec.get("targets"), spec.get("limit"), int(config.params("seed")))
    chat = dict(spec.get("chat") or {})  # API models only: ChatOptions fields plus `concurrency`
    concurrency = int(chat.pop("concurrency", 8))
    path = run_grid(grid, out, workers or int(config.params("run.workers")), progress,
                    policy_options=chat, concurrency=concurrency, wall_time=False)
    table = summarize(load_episodes(path))
    (out / "summary.json").write_text(json.dumps(table.to_dict(orient="records"), sort_keys=True, indent=1) + "\n")
    return path


if __name__ == "__main__":
    import sys

    from pushbench import config

    names = [a for a in sys.argv[1:] if not a.startswith("-")]
    known = sorted(config.params("experiments"))
    if len(names) != 1 or names[0] not in known:
        sys.exit(f"usage: python -m pushbench.runner EXPERIMENT [--no-progress]; experiments in params.yaml: "
                 f"{', '.join(known)}")
    run_experiment(names[0], progress="--no-progress" not in sys.argv)
