"""Per-episode metrics from a hand-built verifier event log, and the per-condition summary."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from pushbench.scoring.items import repeated_searches
from pushbench.scoring.metrics import common_metrics, load_episodes, summarize
from pushbench.tasks import get_family


def episode_metrics(events, target, budget):
    """A RepoScan episode's metrics: the common ones and the family hook's (the hook ignores the task)."""
    return {**common_metrics(events, target, budget), **get_family("reposcan").episode_metrics(events, None)}
from pushbench.verifier import Verifier


def call(step: int, tool: str, args=None, ok: bool = True, info=None) -> dict:
    record = {"kind": "call", "step": step, "tool": tool, "args": args if args is not None else {}, "ok": ok,
              "error": None if ok else "ERROR: bad"}
    if info:
        record["info"] = info
    return record


def verdict(step: int, item: str, v: str) -> dict:
    return {"kind": "verdict", "step": step, "item": item, "verdict": v}


def end(reason: str, reported=None) -> dict:
    return {"kind": "end", "reason": reason, "reported": reported}


def log() -> list[dict]:
    """search q p1, search Q p1 (repeat, case), bad JSON, submit a b c x, submit a d, search q p2,
    status, submit e, intercepted final, search q (page default 1: repeat), final(6)."""
    return [
        call(1, "search", {"query": "q", "page": 1}),
        call(2, "search", {"query": " Q ", "page": 1}),
        call(3, "search", "{not json", ok=False),
        call(4, "submit", {"ids": ["a", "b", "c", "x"]}),
        verdict(4, "a", "accepted"), verdict(4, "b", "accepted"), verdict(4, "c", "accepted"),
        verdict(4, "x", "rejected"),
        call(5, "submit", {"ids": ["a", "d"]}),
        verdict(5, "a", "duplicate"), verdict(5, "d", "accepted"),
        call(6, "search", {"query": "q", "page": 2}),
        call(7, "status"),
        call(8, "submit", {"ids": ["e"]}),
        verdict(8, "e", "accepted"),
        call(9, "final", {"count": 6}, info={"intercepted_by": "gated"}),
        call(10, "search", {"query": "q"}),
        call(11, "nope", "x", ok=False),
        call(12, "final", {"count": 6}),
        end("final", reported=6),
    ]


def test_metrics_of_a_false_completion() -> None:
    m = episode_metrics(log(), target=10, budget=30)
    assert m == {
        "success": False,
        "valid_count": 5,  # a b c d e
        "submissions": 7,
        "duplicate_submissions": 1,
        "duplicate_submit_rate": round(1 / 7, 6),
        "rejected_submissions": 1,
        "invalid_actions": 2,
        "intercepted_actions": 1,
        "tool_failures": 0,
        "false_completion": True,
        "premature_stop": True,
        "reported_count": 6,
        "reported_count_error": 1,
        "steps": 12,
        "valid_per_step": round(5 / 12, 6),
        "repeated_searches": 2,  # " Q " p1 = "q" p1; "q" with the default page 1
        "status_calls": 1,
        "termination": "final",
    }


def test_success_at_the_target() -> None:
    m = episode_metrics(log(), target=5, budget=30)
    assert m["success"] is True and m["false_completion"] is False and m["premature_stop"] is False


def test_give_up_below_target_is_premature_but_not_a_false_completion() -> None:
    events = log()[:-2] + [end("give_up")]
    m = episode_metrics(events, target=10, budget=30)
    assert m["termination"] == "give_up"
    assert m["premature_stop"] is True and m["false_completion"] is False
    assert m["reported_count"] is None and m["reported_count_error"] is None


def test_budget_exhaustion_is_neither() -> None:
    m = episode_metrics(log()[:-2] + [end("budget")], target=10, budget=11)
    assert (m["termination"], m["premature_stop"], m["false_completion"], m["success"]) == ("budget", False, False, False)


def test_no_end_record_is_an_error_and_empty_log_is_zero() -> None:
    assert episode_metrics(log()[:-1], 10, 30)["termination"] == "error"
    m = episode_metrics([], 10, 30)
    assert m["steps"] == 0 and m["valid_per_step"] == 0.0 and m["duplicate_submit_rate"] == 0.0
    assert m["valid_count"] == 0 and m["success"] is False and m["termination"] == "error"


def test_accepted_items_are_counted_once() -> None:
    events = [verdict(1, "a", "accepted"), verdict(2, "a", "accepted"), end("final", 1)]
    assert episode_metrics(events, 1, 5)["valid_count"] == 1


def test_repeated_searches_ignore_failed_and_non_search_calls() -> None:
    calls = [call(1, "search", {"query": "q", "page": 1}), call(2, "search", {"query": "q", "page": 1}, ok=False),
             call(3, "status"), call(4, "search", "q", ok=True), call(5, "search", {"query": "q", "page": 1})]
    assert repeated_searches(calls) == 1


def test_metrics_from_a_real_verifier_log() -> None:
    verifier = Verifier("t", 2, {"a.py::f", "a.py::g"}.__contains__)
    verifier.record_call(1, "submit", {"ids": ["a.py::f", "a.py::h"]}, True)
    verifier.judge(1, "a.py::f")
    verifier.judge(1, "a.py::h")
    verifier.record_call(2, "submit", {"ids": ["a.py::f", "a.py::g"]}, True)
    verifier.judge(2, "a.py::f")
    verifier.judge(2, "a.py::g")
    verifier.record_call(3, "final", {"count": 3}, True)
    verifier.end(3, "final", reported=3)
    m = episode_metrics(verifier.events, 2, 10)
    assert (m["success"], m["valid_count"], m["submissions"], m["duplicate_submissions"]) == (True, 2, 4, 1)
    assert m["duplicate_submit_rate"] == 0.25 and m["reported_count_error"] == 1 and m["steps"] == 3


def _row(controller: str, success: bool, valid: int, **extra) -> dict:
    return {"family": "reposcan", "model": "sim/base", "backend": "native", "memory": "full",
            "controller": controller, "success": success, "valid_count": valid, "duplicate_submit_rate": 0.0,
            "valid_per_step": 1.0, "false_completion": not success, "premature_stop": False,
            "repeated_searches": 0, "steps": 10, **extra}


def test_summarize_per_condition(tmp_path) -> None:
    rows = [_row("standard", True, 10), _row("standard", False, 4), _row("gated", True, 12)]
    path = tmp_path / "episodes.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    table = summarize(load_episodes(tmp_path))
    assert list(table["controller"]) == ["gated", "standard"]
    standard = table[table["controller"] == "standard"].iloc[0]
    assert standard["episodes"] == 2 and standard["success_rate"] == 0.5 and standard["mean_valid"] == 7
    assert standard["false_completion"] == 0.5
    assert isinstance(load_episodes(path), pd.DataFrame)
    with pytest.raises(FileNotFoundError):
        load_episodes(tmp_path / "missing")


def test_summarize_shows_the_metrics_each_family_declares() -> None:
    """Declaration.summary: RepoScan's repeated searches, rows' status calls; a family this process
    does not know adds none; each column is the mean over its own family's rows."""
    rows = [{**_row("standard", True, 10), "repeated_searches": 2, "status_calls": 1},
            {**_row("standard", True, 10), "family": "rows", "repeated_searches": None, "status_calls": 3},
            {**_row("standard", True, 10), "family": "elsewhere", "status_calls": 5, "other": 1}]
    table = summarize(pd.DataFrame(rows))
    assert list(table.columns[-2:]) == ["repeated_searches", "status_calls"] and "other" not in table
    by_family = table.set_index("family")
    assert by_family.loc["reposcan", "repeated_searches"] == 2 and by_family.loc["rows", "status_calls"] == 3
    assert pd.isna(by_family.loc["rows", "repeated_searches"])
    only_reposcan = summarize(pd.DataFrame(rows[:1]))
    assert "status_calls" not in only_reposcan and "repeated_searches" in only_reposcan
