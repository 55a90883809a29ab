"""DataOps-lite tasks: the 24 backlogs, deterministic builds, real sources, and every checker."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from pushbench.tasks.manifests import build_family
from pushbench.tasks.dataops import data as src
from pushbench.tasks.dataops import units as du
from pushbench.tasks.dataops.oracle import apply_edit, read_unit

from dataops_kit import dataops_data, dataops_tasks  # noqa: F401  (fixtures)

BUDGETS = {3: 30, 5: 50, 10: 90, 20: 160}


def test_24_backlogs_with_the_paper_budgets(dataops_tasks) -> None:
    tasks = list(dataops_tasks.values())
    assert len(tasks) == 24
    assert Counter(t.target for t in tasks) == {3: 6, 5: 6, 10: 6, 20: 6}
    for task in tasks:
        assert task.budget == BUDGETS[task.target]
        assert len(task.settings["units"]) == task.target
        assert task.oracle_steps <= 0.7 * task.budget
        kinds = Counter(u["kind"] for u in task.settings["units"])
        assert set(kinds) == set(du.KINDS)  # every backlog mixes the three unit types
        assert f"backlog of {task.target} data-operations units" in task.objective


def test_build_is_byte_identical(tmp_path: Path, snapshot_root: Path, dataops_data: Path) -> None:
    build_family("dataops", data_root=tmp_path, snapshot_root=snapshot_root)
    assert (tmp_path / "manifests" / "dataops.jsonl").read_bytes() == \
        (dataops_data / "manifests" / "dataops.jsonl").read_bytes()
    for path in sorted((dataops_data / "hidden" / "dataops").glob("*.json")):
        assert (tmp_path / "hidden" / "dataops" / path.name).read_bytes() == path.read_bytes()


def test_manifests_carry_no_answers(dataops_tasks, dataops_data: Path) -> None:
    manifest = (dataops_data / "manifests" / "dataops.jsonl").read_text(encoding="utf-8")
    assert "expected" not in manifest and "reference" not in manifest
    for task in dataops_tasks.values():
        hidden = json.loads((dataops_data / "hidden" / "dataops" / f"{task.task_id}.json").read_text())
        for unit, answer in hidden["units"].items():
            if "expected" in answer and answer["form"] == "csv":  # a row value is never in the title
                title = next(u["title"] for u in task.settings["units"] if u["id"] == unit)
                assert f" {answer['expected']} " not in f" {title} "


def test_titles_parse_back_to_their_question() -> None:
    title = du.title_of("missing", file="PKG-INFO", repo="requests", field="Version", key="__version__",
                        truth="src/requests/__version__.py")
    q = du.parse_title(title)
    assert q is not None and q.form == "missing" and q["field"] == "Version" and q.kind == du.METADATA
    assert du.parse_title("Please do something else.") is None


def test_real_sources_agree_with_their_descriptions() -> None:
    assert len(src.dataset_rows("iris")) == 150 and src.class_count("iris", 0) == 50
    assert [src.class_count("wine_data", t) for t in range(3)] == [59, 71, 48]
    assert src.class_count("breast_cancer", 0) == 212 and src.class_count("breast_cancer", 1) == 357
    assert len(src.dataset_rows("diabetes")) == 442
    assert src.csv_text("iris").splitlines()[1] == "5.1,3.5,1.4,0.2,0"  # the bundled file's own text
    assert "class_1 (71)" in src.doc_text("wine_data")


def _units(dataops_tasks, dataops_data: Path, snapshot_root: Path):
    for task in dataops_tasks.values():
        hidden = json.loads((dataops_data / "hidden" / "dataops" / f"{task.task_id}.json").read_text())
        for unit in task.settings["units"]:
            files = du.unit_files(task.settings["recipes"][unit["id"]], str(snapshot_root))
            yield task, unit, files, hidden["units"][unit["id"]]


def test_every_checker_passes_the_reference_and_fails_a_wrong_state(dataops_tasks, dataops_data: Path,
                                                                   snapshot_root: Path) -> None:
    checked = Counter()
    for task, unit, files, expected in _units(dataops_tasks, dataops_data, snapshot_root):
        q = du.parse_title(unit["title"])
        action, _ = read_unit(unit["id"], q, files, task.settings["page_rows"], task.settings["page_lines"])
        if action[0] == "answer":
            assert du.check_state(expected, action[1], files)[0], unit
            assert not du.check_state(expected, action[1] + "7", files)[0], unit
            assert not du.check_state(expected, None, files)[0]
        else:
            fixed = apply_edit(files, *action[1:])
            assert du.check_state(expected, None, fixed)[0], unit
            assert not du.check_state(expected, None, files)[0], unit  # the broken file as shipped
            wrong = apply_edit(fixed, action[1], action[3], action[3] + "x")
            assert not du.check_state(expected, None, wrong)[0], unit
        checked[expected["form"]] += 1
    assert set(checked) == {"csv", "class", "instances", "attributes", "version", "requires", "wrong", "missing"}


def test_metadata_checker_reports_the_kind_of_damage(snapshot_root: Path) -> None:
    reference = src.pkg_info(str(snapshot_root), "requests")
    missing = du.corrupt(reference, "PKG-INFO", "Version", "missing", "")
    ok, detail = du.check_file("PKG-INFO", missing, reference, "Version")
    assert not ok and "missing" in detail
    doubled = reference.replace("Version: 2.32.3", "Version: 2.32.3\nVersion: 2.32.3")
    assert "more than once" in du.check_file("PKG-INFO", doubled, reference, "Version")[1]
    other = reference.replace("License: Apache-2.0", "License: MIT")
    assert "other than" in du.check_file("PKG-INFO", other, reference, "Version")[1]
    toml = src.project_table(str(snapshot_root), "flask")
    assert du.check_file("pyproject.toml", toml, toml, "requires-python")[0]
    assert "not valid TOML" in du.check_file("pyproject.toml", toml + "\n[broken", toml, "requires-python")[1]


@pytest.mark.parametrize("given,expected,ok", [("5.1", "5.1", True), (" `5.10` ", "5.1", True), ("5.2", "5.1", False),
                                               (">=3.8", ">=3.8", True), (">=3.7", ">=3.8", False), ("71", "71", True)])
def test_answer_comparison(given: str, expected: str, ok: bool) -> None:
    assert du.same_value(given, expected) is ok
