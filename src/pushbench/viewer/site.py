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

import base64
import gzip
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from pushbench.runner.files import BadRow, read_rows, trace_name
from pushbench.viewer.episode import episode_payload

STATIC = ("index.html", "viewer.js", "viewer.css")
INDEX_COLUMNS = ["episode_id", "task_id", "family", "model", "controller", "memory", "backend", "seed",
                 "outcome", "termination", "target", "budget", "valid_count", "reported_count", "steps",
                 "llm_calls", "input_tokens", "output_tokens", "parent", "fork_step", "run", "file"]


class ViewerError(ValueError):
    """Bad input to the viewer (the message is one line for the user)."""


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
    path = run_dir / "scored.jsonl"
    if not path.is_file():
        path = run_dir / "episodes.jsonl"
    if not path.is_file():
        raise ViewerError(f"{run_dir} has no scored.jsonl or episodes.jsonl (not a run folder)")
    try:
        rows = read_rows(path)
    except BadRow as err:
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


def page_file(run: str, episode_id: str) -> str:
    return f"data/ep/{run}/" + trace_name(episode_id).removesuffix(".json.gz") + ".js"


def index_row(row: dict[str, Any], run: str, file: str | None) -> list[Any]:
    values = {**row, "outcome": outcome(row), "run": run, "file": file}
    return [values.get(c) for c in INDEX_COLUMNS]


def script(call: str, *args: Any) -> bytes:
    return (f"{call}(" + ",".join(json.dumps(a, sort_keys=True, separators=(",", ":")) for a in args)
            + ");\n").encode()


def packed(payload: dict[str, Any]) -> str:
    raw = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str).encode()
    return base64.b64encode(gzip.compress(raw, compresslevel=6, mtime=0)).decode()


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
            from pushbench.memory.recall import recorded_window

            self.windows[model] = recorded_window(model)
        return self.windows[model]

    def close(self) -> None:
        for env in self.envs.values():
            if env is not None:
                env.end("give_up")


def build_site(run_dirs: list[Path], out: Path) -> BuildStats:
    """Write the viewer of ``run_dirs`` to ``out`` (replaced whole, or left as it was on error)."""
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
        stats = _write(runs, tmp)
        _swap(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return stats


def _write(runs: list[tuple[str, Path, list[dict[str, Any]]]], root: Path) -> BuildStats:
    static = resources.files("pushbench.viewer") / "static"
    for name in STATIC:
        (root / name).write_bytes((static / name).read_bytes())
    stats, context, rows = BuildStats(), _Context(), []
    try:
        for name, run_dir, run_rows in runs:
            for row in run_rows:
                rows.append(index_row(row, name, _write_episode(root, name, run_dir, row, context, stats)))
                stats.episodes += 1
    finally:
        context.close()
    data = {"columns": INDEX_COLUMNS, "rows": rows, "runs": [name for name, _, _ in runs],
            "notes": sorted(stats.notes)}
    (root / "data").mkdir(exist_ok=True)
    (root / "data" / "index.js").write_bytes(script("PB.index", data))
    return stats


def _write_episode(root: Path, run: str, run_dir: Path, row: dict[str, Any], context: _Context,
                   stats: BuildStats) -> str | None:
    trace_path = run_dir / "traces" / trace_name(row["episode_id"])
    if not trace_path.is_file():
        stats.missing_traces += 1
        return None
    try:
        trace = json.loads(gzip.decompress(trace_path.read_bytes()))
    except (OSError, EOFError, ValueError):
        raise ViewerError(f"{trace_path} is not a gzip JSON trace") from None
    env = context.env(row["family"], row["task_id"])
    payload = episode_payload(row, trace, env, context.window(row["model"]) if env is not None else None)
    if not payload["views"]:
        stats.without_views += 1
        stats.notes.add(payload["views_note"])
    file = page_file(run, row["episode_id"])
    target = root / file
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(script("PB.episode", f"{run}/{row['episode_id']}", packed(payload)))
    stats.pages += 1
    return file


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
