"""Score a black-box episode from the MCP server's verifier log, into the runner's row format.

The server logs what the verifier saw; it cannot know why a client went away. If the log has no
``end`` record (the agent stopped without ``final`` before the budget, crashed, or was killed at
the time limit), the harness closes it with the verifier's own record format and one of the
reasons below, so scoring treats it as it treats an in-process episode.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from pushbench.prices import load_prices
from pushbench.scoring import score_events
from pushbench.scoring.usage import episode_usage
from pushbench.runner import EpisodeSpec
from pushbench.tasks.base import TaskSpec

# Why a log without an end record was closed: the agent exited by itself (like a text reply
# in-process), exited with an error, or was killed at the time limit.
CLOSE_REASONS = ("give_up", "agent_error", "timeout")
USAGE_KEYS = ("llm_calls", "input_tokens", "output_tokens")


def read_events(path: Path) -> list[dict[str, Any]]:
    """The event log; a torn last line (server killed mid-write) is ignored."""
    if not path.is_file():
        return []
    events = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            break
        if isinstance(record, dict) and "kind" in record:
            events.append(record)
    return events


def closing_record(events: list[dict[str, Any]], target: int, reason: str) -> dict[str, Any] | None:
    """The end record a log without one needs (None if it already ended)."""
    if reason not in CLOSE_REASONS:
        raise ValueError(f"unknown close reason {reason!r}")
    if any(e["kind"] == "end" for e in events):
        return None
    steps = sum(1 for e in events if e["kind"] == "call")
    valid = len({e["item"] for e in events if e["kind"] == "verdict" and e["verdict"] == "accepted"})
    return {"seq": len(events), "kind": "end", "step": steps, "reason": reason, "reported": None,
            "valid_count": valid, "target": target}


def close_log(path: Path, target: int, reason: str) -> list[dict[str, Any]]:
    """Read the log, append the closing record if it lacks one, and return all events."""
    events = read_events(path)
    record = closing_record(events, target, reason)
    if record is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        data = path.read_bytes() if path.is_file() else b""
        if data and not data.endswith(b"\n"):  # drop a torn last line before appending
            path.write_bytes(data[: data.rfind(b"\n") + 1])
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record, sort_keys=True) + "\n")
        events.append(record)
    return events


def read_usage(path: Path) -> dict[str, int | None]:
    """LLM calls and tokens an agent reported (the stand-in does); None where unknown."""
    usage: dict[str, int | None] = dict.fromkeys(USAGE_KEYS)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return usage
    if isinstance(data, dict):
        for key in USAGE_KEYS:
            if isinstance(data.get(key), int) and not isinstance(data.get(key), bool) and data[key] >= 0:
                usage[key] = data[key]
    return usage


def score(spec: EpisodeSpec, task: TaskSpec, events: list[dict[str, Any]], agent: str,
          usage: dict[str, int | None]) -> dict[str, Any]:
    """One episodes.jsonl row: the runner's keys (backend "blackbox") plus the agent's name, with
    the usage columns of every scored row (``scoring.usage``; an agent product's HTTP requests
    and caching are its own, so those are unknown)."""
    counts = {key: usage.get(key) for key in USAGE_KEYS}
    return {"episode_id": spec.episode_id, **asdict(spec), "target": task.target, "budget": task.budget,
            **score_events(events, task), **counts,
            **episode_usage({**counts, "model": spec.model}, None, load_prices()),
            "requests": None, "cache_hits": None, "cached_tokens": None, "agent": agent}
