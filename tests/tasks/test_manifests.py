"""Tests for pushbench.tasks.manifests on the real snapshots: determinism and the properties of all 36 tasks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from pushbench import config
from pushbench.tasks.reposcan.codeindex import load_units
from pushbench.tasks.reposcan.family import holds
from pushbench.tasks.reposcan.reader import Goal, parse_objective

BUDGETS = {10: 30, 25: 60, 50: 100, 100: 180}


def files_of(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != "BUILT"}


@pytest.mark.slow
def test_two_builds_are_byte_identical(built_data: Path, tmp_path: Path) -> None:
    """Build 'a' in this process and 'b' in a fresh one with another hash seed: same bytes."""
    b = tmp_path / "b"
    code = ("import sys; from pathlib import Path; from pushbench.tasks.manifests import build_family; "
            "build_family('reposcan', data_root=Path(sys.argv[1]))")
    env = {**os.environ, "PYTHONHASHSEED": "4711"}
    proc = subprocess.run([sys.executable, "-c", code, str(b)], cwd=config.ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    a_files, b_files = files_of(built_data), files_of(b)
    assert sorted(a_files) == sorted(b_files)
    assert len([f for f in a_files if f.startswith("hidden/reposcan/")]) == 36
    assert "manifests/reposcan.jsonl" in a_files
    for name in a_files:
        assert a_files[name] == b_files[name], name


@pytest.mark.slow
def test_a_rebuild_removes_stale_answers_and_rewrites_the_same_files(built_data: Path, tmp_path: Path) -> None:
    from pushbench.tasks.manifests import build_family

    c = tmp_path / "c"
    stale = c / "hidden" / "reposcan" / "reposcan-gone-fixture-n010.json"
    stale.parent.mkdir(parents=True)
    stale.write_text('{"valid": []}\n')
    specs = build_family("reposcan", data_root=c)
    assert len(specs) == 36 and not stale.exists()
    assert files_of(c) == files_of(built_data)


@pytest.fixture(scope="module")
def rows(built_data: Path) -> list[dict]:
    lines = (built_data / "manifests" / "reposcan.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def test_thirty_six_tasks_in_id_order(rows: list[dict]) -> None:
    ids = [r["task_id"] for r in rows]
    assert len(ids) == 36 and ids == sorted(ids) and len(set(ids)) == 36
    expected = {f"reposcan-{repo}-{p}-n{n:03d}" for repo in ("flask", "pytest", "requests")
                for p in ("fixture", "documented", "calls") for n in BUDGETS}
    assert set(ids) == expected


def test_budgets_oracle_and_settings(rows: list[dict]) -> None:
    for row in rows:
        assert row["budget"] == BUDGETS[row["target"]]
        assert 3 <= row["oracle_steps"] <= 0.6 * row["budget"], row["task_id"]
        assert row["tools"] == ["search", "submit", "status", "final"]
        assert row["family"] == "reposcan"
        assert row["settings"]["page_size"] == 10 and row["settings"]["max_results"] == 50
        assert row["settings"]["max_submit"] == 20
        goal = parse_objective(row["objective"])
        assert goal == Goal(row["repo"], row["predicate"], row["settings"]["predicate_arg"], row["target"])
    # a larger target never needs fewer oracle steps
    by_family = defaultdict(dict)
    for row in rows:
        by_family[(row["repo"], row["predicate"])][row["target"]] = row["oracle_steps"]
    for steps in by_family.values():
        assert [steps[n] for n in sorted(steps)] == sorted(steps.values())


def test_hidden_sets_are_large_and_true(rows: list[dict], hidden_valid, snapshot_root: Path) -> None:
    sets: dict[tuple[str, str], set[str]] = {}
    for row in rows:
        valid = hidden_valid(row["task_id"])
        assert len(valid) >= 120, row["task_id"]
        assert row["target"] <= len(valid)
        key = (row["repo"], row["predicate"])
        assert sets.setdefault(key, valid) == valid  # one valid set per repo and predicate
    for (repo, predicate), valid in sets.items():
        arg = {"fixture": config.params(f"reposcan.repos.{repo}.fixture"), "documented": "",
               "calls": config.params(f"reposcan.repos.{repo}.calls")}[predicate]
        goal = Goal(repo, predicate, arg, 0)
        truth = {u.uid for u in load_units(snapshot_root / repo) if holds(goal, u)}
        assert valid == truth


def test_hidden_files_are_sorted_json(built_data: Path) -> None:
    for path in sorted((built_data / "hidden" / "reposcan").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        assert set(data) == {"task_id", "valid"} and data["task_id"] == path.stem
        assert data["valid"] == sorted(set(data["valid"]))


def test_manifest_rows_hold_no_identifiers(built_data: Path) -> None:
    for line in (built_data / "manifests" / "reposcan.jsonl").read_text(encoding="utf-8").splitlines():
        # the objective's format hint is the one '::' allowed
        assert line.count("::") == 1 and "`path/to/file.py::Class.function`" in line


def test_the_command_answers_help_and_an_unknown_family_in_one_line(capsys) -> None:
    from pushbench.tasks.manifests import main

    assert main(["--help"]) == 0
    assert capsys.readouterr().out.startswith("usage: python -m pushbench.tasks.manifests")
    assert main(["reposcan", "nosuch"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: unknown task family 'nosuch'") and "\n" not in err
