"""Metrics of the work-unit families (DataOps-lite, SWE-lite): per-unit and per-type results.

The environment names the tools that change a unit (``UnitEnvironment.WORK_TOOLS``) and its checker
records ``info["checker"]``, so nothing here names a family's tools.
"""

from __future__ import annotations

from typing import Any


def unit_metrics(events: list[dict[str, Any]], units: list[dict[str, Any]],
                 change_tools: tuple[str, ...], submit_tool: str = "submit") -> dict[str, Any]:
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
        if not isinstance(unit, str) or unit not in results:  # results are keyed by unit name
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
        elif event["tool"] in change_tools and event["ok"]:
            changed.add(unit)
            attempted.add(unit)
        elif event["tool"] == submit_tool and event["ok"] and unit in changed:
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
