"""Fault operators, their inverses and the reader's evidence, on small hand-written code."""

from __future__ import annotations

import ast

from pushbench.tasks.swe.faults import apply_edit, fault_sites, functions, repair_candidates
from pushbench.tasks.swe.reader import (function_block, numbered, parse_read, rank_repairs, read_failure,
                                        suspects, visible_repairs)

CODE = '''\
class Box:
    def pick(self, items, strict=True):
        if not items:
            return None
        first = items[1:]
        if len(first) > 0 and strict:
            return first
        found = first[0]
        return found
'''
FAILURE = '''\
F                                                                        [100%]
=================================== FAILURES ===================================
__________________________________ test_pick ___________________________________
tests/test_box.py:7: in test_pick
    assert Box().pick([1, 2]) == [2]
src/box.py:9: in pick
    return helper(found)
E   AssertionError: assert None == [2]
E    +  where None = <bound method Box.pick of <box.Box object at 0x?>>([1, 2])
=========================== short test summary info ============================
FAILED tests/test_box.py::test_pick - AssertionError: assert None == [2]
1 failed
'''


def _lines() -> list[str]:
    return CODE.split("\n")


def test_every_operator_finds_its_sites_in_source_order() -> None:
    func = functions(ast.parse(CODE))[0]
    assert func.qualname == "Box.pick"
    sites = fault_sites(func.node, _lines())
    ops = [(s.lineno, s.op, s.new.strip()) for s in sites]
    assert (2, "bool", "def pick(self, items, strict=False):") in ops
    assert (3, "not", "if items:") in ops
    assert (5, "offby1", "first = items[2:]") in ops
    assert (6, "cmp", "if len(first) <= 0 and strict:") in ops
    assert (6, "andor", "if len(first) > 0 or strict:") in ops
    assert (9, "return", "return") in ops
    assert [s.lineno for s in sites] == sorted(s.lineno for s in sites)
    for site in sites:  # every fault still parses and changes exactly one line
        broken = apply_edit(CODE, site)
        ast.parse(broken)
        assert sum(a != b for a, b in zip(CODE.split("\n"), broken.split("\n"))) == 1


def test_each_fault_is_undone_by_one_repair_candidate() -> None:
    func = functions(ast.parse(CODE))[0]
    for site in fault_sites(func.node, _lines()):
        broken = apply_edit(CODE, site)
        node = functions(ast.parse(broken))[0].node
        repairs = repair_candidates(node, broken.split("\n"))
        assert any(r.lineno == site.lineno and r.new == site.old for r in repairs), site


def test_the_failure_reader_takes_frames_errors_and_suspects() -> None:
    evidence = read_failure(FAILURE)
    assert evidence.failing == ("tests/test_box.py::test_pick",)
    assert [(f.path, f.line, f.function) for f in evidence.frames] == [
        ("tests/test_box.py", 7, "test_pick"), ("src/box.py", 9, "pick")]
    assert evidence.errors[0] == "AssertionError: assert None == [2]"
    assert evidence.cue == "none"
    assert suspects(evidence)[:2] == ["pick", "Box"]  # library frame first, then calls on the test line


def test_repairs_rank_by_traceback_line_then_the_cue() -> None:
    broken = CODE.replace("        return found", "        return")
    lines = numbered(broken)
    repairs = visible_repairs(lines, "pick")
    ranked = rank_repairs(repairs, read_failure(FAILURE), "src/box.py")
    assert ranked[0].lineno == 9 and ranked[0].new == "        return found"


def test_a_function_is_only_repaired_when_all_of_it_was_read() -> None:
    read = "src/box.py lines 1-6 of 9\n" + "\n".join(f"{n:5d}| {t}" for n, t in enumerate(_lines()[:6], 1))
    seen = parse_read(read)
    assert seen[2] == "    def pick(self, items, strict=True):"
    assert function_block(seen, "pick") is None and visible_repairs(seen, "pick") is None
    assert function_block(numbered(CODE), "pick") == (2, 9)
    last = "src/box.py lines 1-10 of 10\n" + "\n".join(f"{n:5d}| {t}" for n, t in enumerate(_lines(), 1))
    assert function_block(parse_read(last), "pick") == (2, 9)  # the function ends at the end of the file
