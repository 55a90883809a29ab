"""Write the static viewer of one or more run folders: works from ``file://`` with no server.

Layout of the output folder::

    index.html  viewer.js  viewer.css      (package data, copied as they are)
    data/index.js                          PB.index({...}): every episode's row, one small file
    data/ep/<episode>.js                   PB.episode(id, "<base64 gzip JSON>"), loaded on demand

Browsers block ``fetch`` from ``file://``, so data files are scripts the page adds when needed.
An episode's JSON is gzip-compressed (and inflated in the browser with ``DecompressionStream``):
search pages compress about sixfold. Bytes are reproducible: sorted JSON, gzip mtime 0, no
timestamps and no absolute paths. The folder is written beside the target and swapped in whole.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from pushbench.log.models import FormatError
from pushbench.log.names import EPISODES, SCORED
from pushbench.log.rows import read_episodes, read_rows
from pushbench.viewer.pages import Job, ViewerError, script, write_pages

STATIC = ("index.html", "viewer.js", "viewer.css")
INDEX_COLUMNS = ["episode_id", "task_id", "family", "model", "controller", "memory", "backend", "seed",
                 "outcome", "termination", "target", "budget", "valid_count", "reported_count", "steps",
                 "llm_calls", "input_tokens", "output_tokens", "parent", "fork_step", "run", "file"]


@dataclass
class BuildStats:
    episodes: int = 0
    pages: int = 0
    missing_traces: int = 0
    without_views: int = 0
    notes: set[str] = field(default_factory=set)


def load_rows(run_dir: Path) -> list[dict[str, Any]]:
    """A run's rows: scored.jsonl (every metric) when present, else the raw episodes.jsonl."""
    if not run_dir.is_dir():
        raise ViewerError(f"{run_dir} is not a folder")
    path = run_dir / SCORED
    if not path.is_file():
        path = run_dir / EPISODES
    if not path.is_file():
        raise ViewerError(f"{run_dir} has no {SCORED} or {EPISODES} (not a run folder)")
    try:
        rows = read_rows(path) if path.name == SCORED else [row.facts() for row in read_episodes(path)]
    except FormatError as err:
        raise ViewerError(str(err)) from None
    for row in rows:
        missing = [k for k in ("episode_id", "task_id", "family", "model", "controller", "memory") if k not in row]
        if missing:
            raise ViewerError(f"{path}: a row lacks {', '.join(missing)}")
    return sorted(rows, key=lambda r: r["episode_id"])


def outcome(row: dict[str, Any]) -> str:
    if "success" not in row:
        return "unscored"
    if row["success"]:
        return "success"
    return "false completion" if row.get("false_completion") else "failure"


def index_row(row: dict[str, Any], run: str, file: str | None) -> list[Any]:
    values = {**row, "outcome": outcome(row), "run": run, "file": file}
    return [values.get(c) for c in INDEX_COLUMNS]


def build_site(run_dirs: list[Path], out: Path, workers: int = 1) -> BuildStats:
    """Write the viewer of ``run_dirs`` to ``out`` (replaced whole, or left as it was on error).

    ``workers`` > 1 writes the episode pages in that many processes; the bytes are the same."""
    if not run_dirs:
        raise ViewerError("name at least one run folder")
    names = [Path(d).resolve().name for d in run_dirs]
    if len(set(names)) != len(names):
        raise ViewerError("two run folders have the same name: " + ", ".join(sorted(names)))
    runs = [(name, Path(d), load_rows(Path(d))) for name, d in zip(names, run_dirs)]
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        stats = _write(runs, tmp, workers)
        _swap(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return stats


def _write(runs: list[tuple[str, Path, list[dict[str, Any]]]], root: Path, workers: int) -> BuildStats:
    static = resources.files("pushbench.viewer") / "static"
    for name in STATIC:
        (root / name).write_bytes((static / name).read_bytes())
    jobs = [Job(name, run_dir, row) for name, run_dir, run_rows in runs for row in run_rows]
    stats, rows = BuildStats(), []
    for job, page in zip(jobs, write_pages(root, jobs, workers)):
        rows.append(index_row(job.row, job.run, page.file))
        stats.episodes += 1
        stats.pages += page.file is not None
        stats.missing_traces += page.file is None
        if page.views_note is not None:
            stats.without_views += 1
            stats.notes.add(page.views_note)
    data = {"columns": INDEX_COLUMNS, "rows": rows, "runs": [name for name, _, _ in runs],
            "notes": sorted(stats.notes)}
    (root / "data").mkdir(exist_ok=True)
    (root / "data" / "index.js").write_bytes(script("PB.index", data))
    return stats


def _swap(tmp: Path, out: Path) -> None:
    if out.exists() and not (out / "index.html").is_file() and any(out.iterdir()):
        raise ViewerError(f"{out} exists and is not a viewer folder: refusing to replace it")
    old = None
    if out.exists():
        old = out.with_name(f".{out.name}.old")
        shutil.rmtree(old, ignore_errors=True)
        os.replace(out, old)
    os.replace(tmp, out)
    os.chmod(out, 0o755)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
