"""The one writer and the one reader of the run folder's JSONL rows (``episodes.jsonl``; a reader of
``scored.jsonl`` too). Rows are appended as episodes finish and rewritten sorted at the end."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, TextIO

from pushbench.log.models import EpisodeRow, FormatError


class BadRow(FormatError):
    """A line of a JSONL file that is not JSON (the message names the file and line)."""


def row_line(row: EpisodeRow) -> str:
    """The row as a line of ``episodes.jsonl`` (sorted keys, the format version included)."""
    return json.dumps(row.as_json(), sort_keys=True) + "\n"


def append_row(sink: TextIO, row: EpisodeRow, sync: bool = False) -> None:
    """Append one row and flush it (``sync``: and ``fsync``, so a killed run loses no finished row)."""
    sink.write(row_line(row))
    sink.flush()
    if sync:
        os.fsync(sink.fileno())


def read_rows(path: Path) -> list[dict[str, Any]]:
    """Every row of a JSONL file, in order; ``BadRow`` names the first line that is not JSON."""
    rows = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                raise BadRow(f"{path}: line {number} is not JSON") from None
    return rows


def read_episodes(path: Path) -> list[EpisodeRow]:
    """The rows of an ``episodes.jsonl``, in order, each through the format check."""
    out = []
    for number, data in enumerate(read_rows(path), 1):
        if not isinstance(data, dict):
            raise FormatError(f"{path}: line {number} is not a JSON object")
        out.append(EpisodeRow.from_json(data, f"{path}: line {number}", Path(path).parent))
    return out


def _row(line: str) -> dict[str, Any] | None:
    """A complete episode row, or None (a torn or garbled line)."""
    try:
        row = json.loads(line)
    except ValueError:
        return None
    return row if isinstance(row, dict) and isinstance(row.get("episode_id"), str) else None


def read_done(path: Path) -> set[str]:
    """Episode ids already recorded; a torn last line (killed mid-write) is dropped, and any other
    line that is not a complete row does not count (the episode runs again; ``sort_jsonl`` drops it)."""
    if not path.exists():
        return set()
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        data = data[: data.rfind(b"\n") + 1]
        path.write_bytes(data)
    rows = (_row(line) for line in data.decode("utf-8", errors="replace").splitlines() if line.strip())
    return {row["episode_id"] for row in rows if row is not None}


def sort_jsonl(path: Path) -> int:
    """Rewrite ``episodes.jsonl`` sorted, one row per episode id (the first complete row of each;
    lines that are not complete rows are dropped), atomically (temp file + ``os.replace``).
    Returns how many lines were dropped."""
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    kept: dict[str, str] = {}
    for line in lines:
        row = _row(line) if line.strip() else None
        if row is not None and row["episode_id"] not in kept:
            kept[row["episode_id"]] = line
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as sink:
        sink.write("".join(line + "\n" for line in sorted(kept.values())))
        sink.flush()
        os.fsync(sink.fileno())
    os.replace(tmp, path)
    return sum(1 for line in lines if line.strip()) - len(kept)
