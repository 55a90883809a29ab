"""The QGP metrics every family shares, computed from the verifier's event log alone.

No tool name appears here: what depends on a family's tools (repeated searches, unit results)
comes from that family's ``episode_metrics`` hook, and ``pushbench.scoring.score_events`` joins both.
"""

from __future__ import annotations

from typing import Any


def common_metrics(events: list[dict[str, Any]], target: int, budget: int) -> dict[str, Any]:
    calls = [e for e in events if e["kind"] == "call"]
    verdicts = [e for e in events if e["kind"] == "verdict"]
    end = next((e for e in reversed(events) if e["kind"] == "end"), None)
    accepted = {e["item"] for e in verdicts if e["verdict"] == "accepted"}
    valid = len(accepted)
    duplicates = sum(1 for e in verdicts if e["verdict"] == "duplicate")
    rejected = sum(1 for e in verdicts if e["verdict"] == "rejected")
    termination = end["reason"] if end else "error"
    reported = end.get("reported") if end else None
    steps = len(calls)
    stopped_early = termination in ("final", "give_up") and valid < target
    return {
        "success": valid >= target,
        "valid_count": valid,
        "submissions": len(verdicts),
        "duplicate_submissions": duplicates,
        "duplicate_submit_rate": round(duplicates / len(verdicts), 6) if verdicts else 0.0,
        "rejected_submissions": rejected,
        "invalid_actions": sum(1 for e in calls if not e["ok"] and not _tool_failure(e)),
        "tool_failures": sum(1 for e in calls if _tool_failure(e)),
        "intercepted_actions": sum(1 for e in calls if (e.get("info") or {}).get("intercepted_by")),
        "false_completion": termination == "final" and valid < target,
        "premature_stop": stopped_early,
        "reported_count": reported,
        "reported_count_error": abs(reported - valid) if reported is not None else None,
        "steps": steps,
        "valid_per_step": round(valid / steps, 6) if steps else 0.0,
        "termination": termination,
    }


def _tool_failure(call: dict[str, Any]) -> bool:
    """A call whose handler raised: the tool's bug, not the agent's mistake."""
    return bool((call.get("info") or {}).get("tool_failure"))


CONDITION = ["family", "model", "backend", "memory", "controller"]


def load_episodes(path: Any) -> Any:
    """Scored episodes as a DataFrame: a JSONL file, or a run folder (its scored.jsonl, else its
    episodes.jsonl when that already holds metrics, as the black-box harness writes it)."""
    import pandas as pd
    from pathlib import Path

    from pushbench.log.models import FORMAT_KEY
    from pushbench.log.names import EPISODES, SCORED

    path = Path(path)
    if path.is_dir():
        path = path / SCORED if (path / SCORED).is_file() else path / EPISODES
    if not path.is_file():
        raise FileNotFoundError(f"no episodes at {path}")
    return pd.read_json(path, lines=True).drop(columns=FORMAT_KEY, errors="ignore")  # a version, not a fact


def family_columns(families: Any) -> list[str]:
    """The metrics these families declare for ``summarize`` (``Declaration.summary``), in order; a
    family this process does not know adds none."""
    from pushbench.registry import UnknownName
    from pushbench.tasks import declaration

    columns: list[str] = []
    for family in sorted(set(families)):
        try:
            shown = declaration(family).summary
        except UnknownName:
            continue
        columns += [c for c in shown if c not in columns]
    return columns


def summarize(episodes: Any, by: list[str] | None = None) -> Any:
    """Per condition: success rate, mean valid count, duplicate rate, valid/step and failure rates,
    then the mean of each metric the episodes' families declare for it (``Declaration.summary``)."""
    by = by or CONDITION
    if "success" not in episodes:
        raise ValueError("these episodes hold raw facts only: score the run first (`pushbench score RUN_DIR`)")
    grouped = episodes.groupby(by, sort=True)
    table = grouped.agg(
        episodes=("success", "size"),
        success_rate=("success", "mean"),
        mean_valid=("valid_count", "mean"),
        duplicate_rate=("duplicate_submit_rate", "mean"),
        valid_per_step=("valid_per_step", "mean"),
        false_completion=("false_completion", "mean"),
        premature_stop=("premature_stop", "mean"),
        mean_steps=("steps", "mean"),
        **{c: (c, "mean") for c in family_columns(episodes.get("family", ())) if c in episodes},
    ).reset_index()
    return table.round(4)
