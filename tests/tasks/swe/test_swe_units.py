"""The SWE-lite catalogue: enough units, well formed, and each one's verifier really works.

``test_units_fail_broken_and_pass_repaired`` runs, for real (no cache), each unit's targeted tests
on a copy carrying every fault of its repository (must fail) and again after only its reference
repair is applied through the agent-facing edit rule (must pass). By default it checks a
deterministic sample (two units per repository, about 10 s); ``PUSHBENCH_SWE_EXHAUSTIVE=1`` checks
all 48 units (about 75 s on 2 cores). ``pushbench manifests build --family swe`` (the DVC stage)
always checks every catalogue unit and builds from the first 16 per repository that pass.
"""

from __future__ import annotations

import os
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

from pushbench import config
from pushbench.tasks.swe.family import check_unit, issue_title
from pushbench.tasks.swe.faults import OPERATORS, apply_edit
from pushbench.tasks.swe.units import load_catalogue, mining_pairs, relevant_tests

REPOS = config.params("swe.repos")  # the configured snapshots

EXHAUSTIVE = os.environ.get("PUSHBENCH_SWE_EXHAUSTIVE") == "1"


@pytest.fixture(scope="module")
def catalogue():
    return load_catalogue()


def test_the_catalogue_has_48_units_over_three_repositories(catalogue) -> None:
    per_repo = Counter(u.repo for u in catalogue)
    assert sum(per_repo.values()) >= 48 and set(per_repo) == set(REPOS)
    assert min(per_repo.values()) >= config.params("swe.units_per_repo")
    assert len({u.unit for u in catalogue}) == len(catalogue)
    assert len({(u.repo, u.path, u.function) for u in catalogue}) == len(catalogue)  # one per function
    for unit in catalogue:
        assert unit.op in OPERATORS and unit.original != unit.broken
        assert 1 <= unit.rank <= config.params("swe.max_rank") and 1 <= len(unit.tests) <= 3
        assert all(t.startswith(("tests/", "testing/")) and "[" not in t for t in unit.tests)


def test_faults_apply_to_the_pinned_snapshots(catalogue, snapshot_root) -> None:
    for unit in catalogue:
        text = (snapshot_root / unit.repo / unit.path).read_text(encoding="utf-8")
        broken = apply_edit(text, unit.edit())
        old, new = unit.fix_strings(broken)
        assert broken.count(old) == 1 and broken.replace(old, new) == text


def test_mining_pairs_are_configured_or_derived_from_the_tree(tmp_path) -> None:
    assert mining_pairs(tmp_path, [["src/a/b.py", "tests/test_b.py"]]) == [("src/a/b.py", "tests/test_b.py")]
    for rel in ("src/pkg/__init__.py", "src/pkg/utils.py", "src/pkg/sub/parser.py", "src/pkg/core.py",
                "tests/test_utils.py", "tests/unit/test_parser.py", "tests/test_other.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    assert mining_pairs(tmp_path, []) == [("src/pkg/sub/parser.py", "tests/unit/test_parser.py"),
                                           ("src/pkg/utils.py", "tests/test_utils.py")]


def test_relevant_tests_skip_slow_fixtures() -> None:
    text = "class TestA:\n    def test_x(self, httpbin):\n        f()\n    def test_y(self):\n        f()\n" \
           "def test_z(pytester):\n    f()\ndef test_w():\n    g()\n"
    assert relevant_tests(text, "tests/t.py", "f") == ["tests/t.py::TestA::test_y"]


def _sample(catalogue):
    if EXHAUSTIVE:
        return catalogue
    by_repo: dict[str, list] = {}
    for unit in catalogue:
        by_repo.setdefault(unit.repo, []).append(unit)
    return [u for units in by_repo.values() for u in (units[0], units[len(units) // 2])]


@pytest.mark.slow
def test_units_fail_broken_and_pass_repaired(catalogue, snapshot_root) -> None:
    chosen = {u.unit for u in _sample(catalogue)}
    used = config.params("swe.units_per_repo")
    failures = []
    for repo in sorted(REPOS):
        units = [u for u in catalogue if u.repo == repo][:used]
        others = {u.unit: [o for o in units if o.unit != u.unit] for u in units}
        with ThreadPoolExecutor(2) as pool:  # each check is two sandboxed pytest runs
            checks = list(pool.map(lambda u: check_unit(u, others[u.unit], snapshot_root, cache=None),
                                   [u for u in units if u.unit in chosen]))
        for check in checks:
            if not check.ok:
                failures.append((check.unit.unit, check.broken.passed, check.fixed.output[-800:]))
            title, kind = issue_title(check.unit, check.broken)
            assert "fails:" in title and kind in ("assertion", "exception")
            assert check.unit.original.strip() not in title  # the issue states the symptom, not the fix
    assert not failures
