"""The episode pages of a site, written in one process or in several (the same bytes either way).

Episodes are grouped by task, so a process builds a task's environment at most once (only a trace
without recorded views needs one: the context replay binds its requirements) and meets the task's
messages again in the token counter's cache; the groups go to the processes largest first. Each page is a file of its own, so the processes write
into the site's temporary folder side by side; the index is written by the caller, in row order.
"""

from __future__ import annotations

import base64
import gzip
import json
import multiprocessing as mp
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from pushbench.log.models import FormatError, Trace
from pushbench.log.names import trace_path, trace_stem
from pushbench.log.traces import read_trace
from pushbench.viewer.episode import episode_payload


PAGE_LEVEL = 3


class ViewerError(ValueError):
    """Bad input to the viewer (the message is one line for the user)."""


@dataclass(frozen=True)
class Job:
    run: str
    run_dir: Path
    row: dict[str, Any]


@dataclass(frozen=True)
class Page:
    file: str | None  # None: the row has no trace
    views_note: str | None = None  # why the page has no context views (None: it has them)


def page_file(run: str, episode_id: str) -> str:
    return f"data/ep/{run}/" + trace_stem(episode_id) + ".js"


def script(call: str, *args: Any) -> bytes:
    return (f"{call}(" + ",".join(json.dumps(a, sort_keys=True, separators=(",", ":")) for a in args)
            + ");\n").encode()


def packed(payload: dict[str, Any]) -> str:
    # check_circular=False: a trace is parsed JSON (no cycles) and the check costs ~10% of the dump
    raw = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str, check_circular=False).encode()
    # level 3: 2.3x less CPU than 6 for pages 24% larger (the viewer stage's largest cost after the JSON)
    return base64.b64encode(gzip.compress(raw, compresslevel=PAGE_LEVEL, mtime=0)).decode()


def write_pages(root: Path, jobs: list[Job], workers: int = 1) -> list[Page]:
    """Write the page of every job under ``root``; the pages in the order of ``jobs``."""
    groups = _groups(jobs)
    pages: list[Page | None] = [None] * len(jobs)
    for indices, written in _results(root, jobs, groups, workers):
        for i, page in zip(indices, written):
            pages[i] = page
    return pages  # type: ignore[return-value]


def _groups(jobs: list[Job]) -> list[list[int]]:
    """Job indices by task, the groups with the most trace bytes first."""
    by_task: dict[tuple[str, str], list[int]] = {}
    for i, job in enumerate(jobs):
        by_task.setdefault((job.row["family"], job.row["task_id"]), []).append(i)
    size = [_trace_size(job) for job in jobs]
    return sorted(by_task.values(), key=lambda group: (-sum(size[i] for i in group), group[0]))


def _trace_size(job: Job) -> int:
    path = trace_path(job.run_dir, job.row["episode_id"])
    return path.stat().st_size if path.is_file() else 0


def _results(root: Path, jobs: list[Job], groups: list[list[int]],
             workers: int) -> Iterator[tuple[list[int], list[Page]]]:
    work = [(root, [jobs[i] for i in group]) for group in groups]
    if workers <= 1 or len(work) <= 1:
        yield from zip(groups, map(_write_group, work))
        return
    from pushbench.tokens import encoding

    encoding()  # the vocabulary, loaded once before the fork instead of once per process
    # leaving the block terminates and joins the processes, so none writes after an error
    with mp.get_context("fork").Pool(min(workers, len(work))) as pool:
        yield from zip(groups, pool.imap(_write_group, work, chunksize=1))


def _write_group(work: tuple[Path, list[Job]]) -> list[Page]:
    root, jobs = work
    context = _Context()
    try:
        return [_write_episode(root, job, context) for job in jobs]
    finally:
        context.close()


def _write_episode(root: Path, job: Job, context: _Context) -> Page:
    row = job.row
    path = trace_path(job.run_dir, row["episode_id"])
    if not path.is_file():
        return Page(None)
    trace = _read_trace(path)
    payload = episode_payload(row, trace, lambda: context.env(row["family"], row["task_id"]),
                              context.window(row["model"]))
    file = page_file(job.run, row["episode_id"])
    target = root / file
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(script("PB.episode", f"{job.run}/{row['episode_id']}", packed(payload)))
    return Page(file, None if payload["views"] else payload["views_note"])


def _read_trace(path: Path) -> Trace:
    try:
        return read_trace(path)
    except (FormatError, OSError) as err:
        raise ViewerError(str(err) if isinstance(err, FormatError) else f"{path} is not a gzip JSON trace") from None


class _Context:
    """Per task: its environment (for the replay's requirements); per model: its window."""

    def __init__(self) -> None:
        self.tasks: dict[str, dict[str, Any]] = {}
        self.envs: dict[str, Any] = {}
        self.windows: dict[str, int | None] = {}

    def env(self, family: str, task_id: str) -> Any | None:
        if task_id not in self.envs:
            self.envs[task_id] = self._make(family, task_id)
        return self.envs[task_id]

    def _make(self, family: str, task_id: str) -> Any | None:
        from pushbench.tasks import get_family, load_tasks

        if family not in self.tasks:
            try:
                self.tasks[family] = {t.task_id: t for t in load_tasks(family)}
            except (FileNotFoundError, KeyError, ValueError):
                self.tasks[family] = {}
        task = self.tasks[family].get(task_id)
        if task is None:
            return None
        try:
            return get_family(family).environment(task)
        except (FileNotFoundError, OSError):
            return None

    def window(self, model: str) -> int | None:
        if model not in self.windows:
            from pushbench.replay.recall import recorded_window

            self.windows[model] = recorded_window(model)
        return self.windows[model]

    def close(self) -> None:
        for env in self.envs.values():
            if env is not None:
                env.end("give_up")


