"""Tests for pushbench.verifier: verdicts, counting, retries, the event log, hidden answer files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pushbench.verifier import Verifier, hidden_path, load_hidden, write_hidden

VALID = frozenset({"a.py::f", "a.py::g", "b.py::C.m"})


def make(**kwargs) -> Verifier:
    return Verifier("t1", 2, VALID.__contains__, **kwargs)


def verdicts(v: Verifier) -> list[tuple[str, str, int]]:
    return [(e["item"], e["verdict"], e["valid_count"]) for e in v.events if e["kind"] == "verdict"]


def test_accepted_rejected_duplicate() -> None:
    v = make()
    assert v.judge(1, "a.py::f") == "accepted"
    assert v.judge(1, "z.py::nope") == "rejected"
    assert v.judge(2, "a.py::f") == "duplicate"  # repeat of an accepted id
    assert v.judge(2, "z.py::nope") == "duplicate"  # repeat of a rejected id (item-set task)
    assert v.judge(3, "a.py::g") == "accepted"
    assert v.valid_count == 2 and v.accepted == {"a.py::f", "a.py::g"}
    assert verdicts(v) == [("a.py::f", "accepted", 1), ("z.py::nope", "rejected", 1),
                           ("a.py::f", "duplicate", 1), ("z.py::nope", "duplicate", 1), ("a.py::g", "accepted", 2)]


def test_order_within_one_submission() -> None:
    v = make()
    items = ["b.py::C.m", "b.py::C.m", "x.py::y", "x.py::y"]
    assert [v.judge(4, i) for i in items] == ["accepted", "duplicate", "rejected", "duplicate"]
    assert v.valid_count == 1


def test_ids_are_compared_exactly() -> None:
    v = make()
    assert v.judge(1, "A.py::f") == "rejected"
    assert v.judge(1, "a.py::f ") == "rejected"
    assert v.judge(1, "a.py::f") == "accepted"


def test_retry_rejected_rejudges_rejected_but_not_accepted() -> None:
    calls: list[str] = []

    def accepts(item: str) -> bool:
        calls.append(item)
        return item in VALID

    v = Verifier("t2", 5, accepts, retry_rejected=True)
    assert v.judge(1, "x.py::broken") == "rejected"
    assert v.judge(2, "x.py::broken") == "rejected"  # judged again, not a duplicate
    assert v.judge(3, "a.py::f") == "accepted"
    assert v.judge(4, "a.py::f") == "duplicate"
    assert calls == ["x.py::broken", "x.py::broken", "a.py::f"]
    # a work unit fixed between submissions: the checker's verdict overrides the hidden check
    assert v.judge(5, "x.py::broken", passed=True) == "accepted"
    assert v.judge(6, "x.py::broken", passed=True) == "duplicate"
    assert v.valid_count == 2


def test_passed_overrides_the_hidden_check() -> None:
    v = make()
    assert v.judge(1, "a.py::f", passed=False) == "rejected"
    assert v.judge(1, "q.py::q", passed=True) == "accepted"
    assert v.accepted == {"q.py::q"}


def test_event_log_records_and_sink() -> None:
    sunk: list[dict] = []
    v = make(sink=sunk.append)
    v.record_call(1, "search", {"query": "x", "page": 1}, True, info={"results": 3})
    v.record_call(2, "submit", {"ids": ["a.py::f"]}, True)
    v.judge(2, "a.py::f")
    v.record_call(3, "submit", "{bad", False, error="ERROR: arguments are not valid JSON")
    v.end(4, "final", reported=7)
    v.end(5, "budget")  # ignored: an episode ends once
    assert sunk == v.events
    assert [e["seq"] for e in v.events] == list(range(5))
    assert [e["kind"] for e in v.events] == ["call", "call", "verdict", "call", "end"]
    assert v.events[0] == {"seq": 0, "kind": "call", "step": 1, "tool": "search",
                           "args": {"query": "x", "page": 1}, "ok": True, "error": None, "info": {"results": 3}}
    assert "info" not in v.events[1]
    assert v.events[2] == {"seq": 2, "kind": "verdict", "step": 2, "item": "a.py::f", "verdict": "accepted",
                           "valid_count": 1}
    assert v.events[3]["ok"] is False and v.events[3]["error"].startswith("ERROR")
    assert v.events[4] == {"seq": 4, "kind": "end", "step": 4, "reason": "final", "reported": 7,
                           "valid_count": 1, "target": 2}
    assert v.ended
    json.dumps(v.events)  # the log is plain JSON


def test_hidden_files_round_trip(tmp_path: Path) -> None:
    path = write_hidden("fam", "task-1", {"task_id": "task-1", "valid": ["b.py::x", "a.py::y"]}, tmp_path)
    assert path == hidden_path("fam", "task-1", tmp_path) == tmp_path / "fam" / "task-1.json"
    assert load_hidden("fam", "task-1", tmp_path) == {"task_id": "task-1", "valid": ["b.py::x", "a.py::y"]}
    v = Verifier.for_item_set("fam", "task-1", 1, tmp_path, retry_rejected=False)
    assert (v.task_id, v.target) == ("task-1", 1)
    assert v.judge(1, "a.py::y") == "accepted" and v.judge(1, "c.py::z") == "rejected"
    # the file is deterministic text (sorted keys, newline at the end)
    assert path.read_text(encoding="utf-8").endswith("}\n")
    assert path.read_text(encoding="utf-8") == json.dumps(json.loads(path.read_text()), sort_keys=True, indent=1) + "\n"


def test_missing_hidden_answers_raise(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="build the manifests first"):
        load_hidden("fam", "absent", tmp_path)
    with pytest.raises(FileNotFoundError):
        Verifier.for_item_set("fam", "absent", 1, tmp_path)
