"""Per-episode QGP metrics, computed from the verifier's event log alone."""

from __future__ import annotations

from typing import Any


def episode_metrics(events: list[dict[str, Any]], target: int, budget: int) -> dict[str, Any]:
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
        "invalid_actions": sum(1 for e in calls if not e["ok"]),
        "intercepted_actions": sum(1 for e in calls if (e.get("info") or {}).get("intercepted_by")),
        "false_completion": termination == "final" and valid < target,
        "premature_stop": stopped_early,
        "reported_count": reported,
        "reported_count_error": abs(reported - valid) if reported is not None else None,
        "steps": steps,
        "valid_per_step": round(valid / steps, 6) if steps else 0.0,
        "repeated_searches": repeated_searches(calls),
        "status_calls": sum(1 for e in calls if e["tool"] == "status" and e["ok"]),
        "termination": termination,
    }


def repeated_searches(calls: list[dict[str, Any]]) -> int:
    """Search calls for a (query, page) already searched earlier in the episode."""
    seen: set[tuple[str, int]] = set()
    repeats = 0
    for call in calls:
        args = call.get("args")
        if call["tool"] != "search" or not call["ok"] or not isinstance(args, dict):
            continue
        key = (str(args.get("query", "")).strip().lower(), int(args.get("page", 1)))
        repeats += key in seen
        seen.add(key)
    return repeats


def unit_metrics(events: list[dict[str, Any]], units: list[dict[str, Any]]) -> dict[str, Any]:
    """Work-unit families: per-unit and per-type results, checker runs and verifier recoveries.

    ``units`` is the task's ``settings["units"]`` (id and kind). A recovery is a unit that failed
    verification after an attempt (a rejected submit, or a checker FAIL once the unit had been
    answered or edited) and was accepted later. A FAIL before any attempt only reproduces the
    issue (every SWE-lite unit starts broken), so it is not a recovery. An unchecked submit is a
    submit of a unit answered or edited since its last checker run.
    """
    kinds = {u["id"]: u["kind"] for u in units}
    results = {uid: {"kind": kind, "passed": False, "submits": 0, "checker_runs": 0, "recovered": False}
               for uid, kind in kinds.items()}
    failed: set[str] = set()
    changed: set[str] = set()
    attempted: set[str] = set()
    unchecked = 0
    for event in events:
        info = event.get("info") or {}
        unit = info.get("unit") if event["kind"] == "call" else event.get("item")
        if unit not in results:
            continue
        row = results[unit]
        if event["kind"] == "verdict":
            row["submits"] += 1
            if event["verdict"] == "accepted":
                row["passed"], row["recovered"] = True, unit in failed
            elif event["verdict"] == "rejected":
                failed.add(unit)
        elif "checker" in info:
            row["checker_runs"] += 1
            changed.discard(unit)
            if not info["checker"] and unit in attempted:
                failed.add(unit)
        elif event["tool"] in ("answer", "edit") and event["ok"]:
            changed.add(unit)
            attempted.add(unit)
        elif event["tool"] == "submit" and event["ok"] and unit in changed:
            unchecked += 1
            changed.discard(unit)
    by_kind: dict[str, dict[str, int]] = {}
    for row in results.values():
        entry = by_kind.setdefault(row["kind"], {"units": 0, "passed": 0})
        entry["units"] += 1
        entry["passed"] += int(row["passed"])
    passed = sum(r["passed"] for r in results.values())
    return {
        "units_total": len(results),
        "units_passed": passed,
        "unit_success_rate": round(passed / len(results), 6) if results else 0.0,
        "checker_runs": sum(r["checker_runs"] for r in results.values()),
        "verifier_recoveries": sum(r["recovered"] for r in results.values()),
        "unchecked_submits": unchecked,
        "unit_results": results,
        "unit_type_results": dict(sorted(by_kind.items())),
    }


CONDITION = ["family", "model", "backend", "memory", "controller"]


def load_episodes(path: Any) -> Any:
    """episodes.jsonl (or a folder holding it) as a DataFrame."""
    import pandas as pd
    from pathlib import Path

    path = Path(path)
    if path.is_dir():
        path = path / "episodes.jsonl"
    if not path.is_file():
        raise FileNotFoundError(f"no episodes at {path}")
    return pd.read_json(path, lines=True)


def summarize(episodes: Any, by: list[str] | None = None) -> Any:
    """Per condition: success rate, mean valid count, duplicate rate, valid/step and failure rates."""
    by = by or CONDITION
    grouped = episodes.groupby(by, sort=True)
    table = grouped.agg(
        episodes=("success", "size"),
        success_rate=("success", "mean"),
        mean_valid=("valid_count", "mean"),
        duplicate_rate=("duplicate_submit_rate", "mean"),
        valid_per_step=("valid_per_step", "mean"),
        false_completion=("false_completion", "mean"),
        premature_stop=("premature_stop", "mean"),
        repeated_searches=("repeated_searches", "mean"),
        mean_steps=("steps", "mean"),
    ).reset_index()
    return table.round(4)
