"""Grouping co-located faults, reading one symptom at a time, and the issue text (no jail runs)."""

from __future__ import annotations

from pushbench.tasks.swe.runs import CheckRun
from pushbench.tasks.swe.units import UnitFault, load_catalogue
from pushbench.tasks.sweissues.issues import (candidates, failure_sections, first_failure, groups_of,
                                              issue_text, union_tests)
from pushbench.tasks.sweissues.mind import failing_positions

OUTPUT = """FF.                                                                      [100%]
=================================== FAILURES ===================================
___________________________ test_first[a] ___________________________
tests/test_x.py:10: in test_first
    assert double(2) == 4
src/pkg/core.py:5: in double
    return x + x + 1
E   AssertionError: assert 5 == 4
___________________________ test_second ___________________________
tests/test_x.py:20: in test_second
    assert halve(4) == 2
src/pkg/core.py:9: in halve
    return
E   TypeError: unsupported operand
=========================== short test summary info ============================
FAILED tests/test_x.py::test_first[a] - AssertionError: assert 5 == 4
FAILED tests/test_x.py::test_second - TypeError: unsupported operand
PASSED tests/test_x.py::test_third
2 failed, 1 passed
"""


def _unit(name: str, path: str, tests: tuple[str, ...] = ("tests/t.py::test_a",)) -> UnitFault:
    return UnitFault(name, "requests", path, "f", "cmp", 1, "a", "b", tests, 1)


def test_groups_are_co_located_deterministic_and_spread_over_files() -> None:
    units = load_catalogue()
    for k in (1, 2, 3):
        groups = candidates(units, k, seed=0)
        assert groups == candidates(units, k, seed=0)
        assert all(len(g) == k and len({(u.repo, u.path) for u in g}) == 1 for g in groups)
        assert len(groups) == sum(len(v) for v in groups_of(units, k).values())
    first = candidates(units, 2, seed=0)[: len(groups_of(units, 2))]
    assert len({(g[0].repo, g[0].path) for g in first}) == len(first)  # one per file before any repeats
    assert candidates(units, 2, seed=1) != candidates(units, 2, seed=0)


def test_the_union_of_tests_is_sorted_and_without_repeats() -> None:
    group = (_unit("a", "p.py", ("t::b", "t::a")), _unit("b", "p.py", ("t::a", "t::c")))
    assert union_tests(group) == ("t::a", "t::b", "t::c")


def test_the_reader_works_from_the_first_symptom_but_knows_every_failing_test() -> None:
    evidence = first_failure(OUTPUT)
    assert evidence.failing == ("tests/test_x.py::test_first[a]", "tests/test_x.py::test_second")
    assert {f.function for f in evidence.frames} == {"test_first", "double"}
    assert evidence.errors == ("AssertionError: assert 5 == 4",)
    assert len(failure_sections(OUTPUT)) == 2


def test_progress_positions_come_from_pytest_s_progress_line() -> None:
    assert failing_positions(OUTPUT) == frozenset({0, 1})
    assert failing_positions("..F.                      [ 50%]\nF...                      [100%]") == frozenset({2, 4})
    assert failing_positions("no progress here") is None


def test_the_issue_names_each_symptom_once_and_never_the_fix() -> None:
    run = CheckRun(False, {}, OUTPUT, 1)
    group = (_unit("a", "src/pkg/core.py"), _unit("b", "src/pkg/core.py"))
    text, kind = issue_text(group, run, "pkg")
    assert text == ("Bug report for `pkg`: `tests/test_x.py::test_first` fails: AssertionError: assert 5 == 4; "
                    "`tests/test_x.py::test_second` fails: TypeError: unsupported operand")
    assert kind == "assertion"
    assert "return x + x" not in text and "double" not in text
