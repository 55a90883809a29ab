"""The run folder's files: traces (gzip JSON, one per episode) and the append-only episodes.jsonl."""

from __future__ import annotations

import gzip
import json
import os
import re
from pathlib import Path
from typing import Any


def trace_name(episode_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", episode_id) + ".json.gz"


def write_trace(trace_dir: Path, episode_id: str, trace: dict[str, Any]) -> None:
    trace_dir.mkdir(parents=True, exist_ok=True)
    final = trace_dir / trace_name(episode_id)
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


def sort_jsonl(path: Path) -> None:
    lines = sorted(line for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    os.replace(tmp, path)
