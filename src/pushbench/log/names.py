"""The names of a run folder's files (one place, so no module spells them itself)."""

from __future__ import annotations

import re
from pathlib import Path

EPISODES = "episodes.jsonl"  # the raw facts of each episode, one row per line (``rows``)
SCORED = "scored.jsonl"  # the raw facts and every metric (``pushbench.scoring``)
SUMMARY = "summary.json"  # the metrics per condition (``pushbench.scoring``)
TRACES = "traces"  # the folder of traces, one per episode (``traces``)
TRACE_SUFFIX = ".json.gz"


def trace_stem(episode_id: str) -> str:
    """An episode id as a file name stem (a trace, a checkpoint, a viewer page share it)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", episode_id)


def trace_name(episode_id: str) -> str:
    return trace_stem(episode_id) + TRACE_SUFFIX


def trace_path(run_dir: Path, episode_id: str) -> Path:
    return Path(run_dir) / TRACES / trace_name(episode_id)
