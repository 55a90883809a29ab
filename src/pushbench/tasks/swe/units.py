"""SWE-lite units: how they are derived (mined) from the snapshots, and the catalogue they form.

Derivation (``python -m pushbench.tasks.swe.mine``; deterministic in the snapshots and the
seed, documented in this family's README.md):

1. For each repository of ``params.yaml`` ``swe.repos``, its (library module, the test file that
   exercises it) pairs: the ones listed there, or for a repository listed with none, every
   ``src/<package>/**/<name>.py`` whose ``tests/test_<name>.py`` (or ``testing/``) exists
   (``mining_pairs``). A new pinned snapshot grows the catalogue by configuration alone.
2. In each module, functions in an order shuffled by ``seed``; in each function, its fault sites
   (``faults.fault_sites``) in an order shuffled the same way, at most ``tries_per_function``.
3. The function's candidate tests: those of the paired file whose source mentions its name, that
   need no server or pytest-in-pytest fixture (``SLOW_FIXTURES``) and pass on the unmodified copy.
   A fault is kept as a unit when, on a copy with only that fault injected, these tests (run
   sandboxed) have 1-8 failures in 1-3 test functions and no collection error; the first
   failure names the faulted function as a suspect (a traceback frame inside it, or a call on the
   failing test line) and its name is defined once in the library; the reader
   (``reader.rank_repairs``) finds the true repair within ``max_rank`` tries; and the repair's
   two-line context is unique in the file. One unit per function, ``per_module`` per module.
4. Independence, greedily in mining order: a unit joins the catalogue only if, on a copy carrying
   the faults of every unit kept so far plus its own, each of them (and it) passes its tests once
   only its own fault is removed. Faults in widely used functions (``Flask.__init__``) fall out
   here. So any backlog of one repository's units is solvable unit by unit.
The catalogue (``catalogue.json`` beside this module) is the output; ``pushbench manifests
build --family swe`` re-checks every unit against real test runs before writing tasks.
"""

from __future__ import annotations

import ast
import json
import random
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from pushbench import config
from pushbench.tasks.swe.faults import LineEdit, apply_edit, fault_sites, functions, parse_python
from pushbench.tasks.swe.reader import (CUE_ORDER, Evidence, Frame, numbered, rank_repairs, read_failure,
                                        suspects, visible_repairs)
from pushbench.tasks.swe.runs import TEST_LIMITS, Workspace, run_tests

CATALOGUE = Path(__file__).with_name("catalogue.json")
# a fault that hangs a test is no unit; the memory limit is the checks' own (a test run's fork server
# is started under it, so a run cannot raise it)
MINING_LIMITS = replace(TEST_LIMITS, cpu_seconds=20, wall_seconds=20.0)
def mining_pairs(tree: Path, configured: list | None = None) -> list[tuple[str, str]]:
    """(library module, test file) pairs mining tries in a snapshot: ``configured`` (params), else
    every module under ``src/`` paired with the test file named after it (``_compat.py``:
    ``test_compat.py``), in path order."""
    if configured:
        return [(str(module), str(test)) for module, test in configured]
    tests = {p.name: p.relative_to(tree).as_posix() for root in ("tests", "testing") if (tree / root).is_dir()
             for p in sorted((tree / root).rglob("test_*.py"))}
    named = {module: f"test_{module.name.lstrip('_')}" for module in sorted((tree / "src").rglob("*.py"))}
    return [(module.relative_to(tree).as_posix(), tests[test]) for module, test in named.items() if test in tests]


SLOW_FIXTURES = frozenset({"httpbin", "httpbin_secure", "pytester", "testdir"})  # a server, or a pytest-in-pytest run


def relevant_tests(test_text: str, test_file: str, name: str) -> list[str]:
    """Test functions of the file whose source mentions ``name`` and need no slow fixture."""
    found = []
    mentions = re.compile(rf"\b{re.escape(name)}\b")
    for node in parse_python(test_text).body:
        methods = [(node.name + "::", m) for m in node.body if isinstance(m, ast.FunctionDef)] \
            if isinstance(node, ast.ClassDef) and node.name.startswith("Test") else [("", node)]
        for prefix, func in methods:
            if not isinstance(func, ast.FunctionDef) or not func.name.startswith("test"):
                continue
            args = {a.arg for a in func.args.args}
            if args & SLOW_FIXTURES or not mentions.search(ast.get_source_segment(test_text, func) or ""):
                continue
            found.append(f"{test_file}::{prefix}{func.name}")
    return found


@dataclass(frozen=True)
class UnitFault:
    """One catalogue entry: the fault and the targeted tests that catch it."""

    unit: str  # e.g. "requests-07"
    repo: str
    path: str
    function: str  # qualified name
    op: str
    lineno: int
    original: str  # the line as shipped
    broken: str  # the line with the fault
    tests: tuple[str, ...]  # targeted test functions (node ids without parameters)
    rank: int  # 1-based position of the true repair in the reader's ranking

    def edit(self) -> LineEdit:
        return LineEdit(self.lineno, self.original, self.broken, self.op)

    def fix_strings(self, broken_text: str) -> tuple[str, str]:
        """(old, new) of the reference repair as an ``edit`` call: the line with the one before it."""
        lines = broken_text.split("\n")
        prev = lines[self.lineno - 2] + "\n" if self.lineno > 1 else ""
        return prev + self.broken, prev + self.original


def load_catalogue(path: Path = CATALOGUE) -> list[UnitFault]:
    rows = json.loads(path.read_text(encoding="utf-8"))
    return [UnitFault(**{**r, "tests": tuple(r["tests"])}) for r in rows]


def inject(ws: Workspace, faults: list[UnitFault]) -> None:
    by_path: dict[str, list[UnitFault]] = {}
    for fault in faults:
        by_path.setdefault(fault.path, []).append(fault)
    for path, group in sorted(by_path.items()):
        text = ws.read(path)
        for fault in group:
            text = apply_edit(text, fault.edit())
        ws.write(path, text)


def node_function(nodeid: str) -> str:
    return nodeid.split("[", 1)[0]


# --- mining ------------------------------------------------------------------------------------

def judge_candidate(ws: Workspace, path: str, qualname: str, edit: LineEdit, selection: list[str],
                    text: str, max_rank: int) -> tuple[tuple[str, ...], int] | None:
    """(targeted tests, reader rank) if this fault makes a good unit, else None."""
    broken = apply_edit(text, edit)
    try:
        parse_python(broken)
    except SyntaxError:
        return None
    ws.write(path, broken)
    try:
        run = run_tests(ws, selection, limits=MINING_LIMITS)
        failing = [n for n, v in run.outcomes.items() if v in ("FAILED", "ERROR")]
        tests = tuple(sorted({node_function(n) for n in failing}))
        if run.passed or run.returncode is None or not 1 <= len(failing) <= 8 or not 1 <= len(tests) <= 3 \
                or "error" in run.output.lower().split("\n")[-1]:
            return None
        targeted = run_tests(ws, list(tests), limits=MINING_LIMITS)  # exactly what the agent will run
    finally:
        ws.write(path, text)
    if targeted.passed:
        return None
    rank = reader_rank(read_failure(targeted.output), broken, path, qualname, edit)
    if rank is None or rank > max_rank:
        return None
    return tests, rank


def reader_rank(evidence: Evidence, broken: str, path: str, qualname: str, edit: LineEdit) -> int | None:
    name = qualname.rsplit(".", 1)[-1]
    if name not in suspects(evidence)[:3]:
        return None
    lines = numbered(broken)
    repairs = visible_repairs(lines, name) if _defined_once(broken, name) else None
    if not repairs:
        return None
    ranked = rank_repairs(repairs, evidence, path)
    for i, repair in enumerate(ranked, 1):
        if repair.lineno == edit.lineno and repair.new == edit.old:
            return i
    return None


def _defined_once(text: str, name: str) -> bool:
    return sum(1 for f in functions(parse_python(text)) if f.qualname.rsplit(".", 1)[-1] == name) == 1


def mine_repo(repo: str, seed: int, per_module: int, max_rank: int, tries_per_function: int,
              quota: int, pairs: list[tuple[str, str]], snapshot_root: Path | None = None) -> list[UnitFault]:
    ws = Workspace(repo, snapshot_root)
    units: list[UnitFault] = []
    used: set[tuple[str, str]] = set()  # one unit per function, across pairs
    try:
        for path, test_file in pairs:
            if len(units) >= quota:
                break
            text = ws.read(path)
            test_text = ws.read(test_file)
            lines = text.split("\n")
            funcs = [f for f in functions(parse_python(text))]
            random.Random(f"{seed}:{repo}:{path}").shuffle(funcs)
            kept = 0
            for func in funcs:
                if kept >= per_module:
                    break
                if (path, func.qualname) in used:
                    continue
                name = func.qualname.rsplit(".", 1)[-1]
                selection = relevant_tests(test_text, test_file, name) if _defined_once(text, name) else []
                selection = _passing_at_baseline(ws, selection)
                if not selection:
                    continue  # the reader finds a function through the failing test that calls it
                sites = fault_sites(func.node, lines)
                random.Random(f"{seed}:{repo}:{path}:{func.qualname}").shuffle(sites)
                sites = [e for e in sites if _hopeful(apply_edit(text, e), path, name, e, max_rank)]
                for edit in sites[:tries_per_function]:
                    found = judge_candidate(ws, path, func.qualname, edit, selection, text, max_rank)
                    if found and _unique_context(apply_edit(text, edit), edit):
                        units.append(UnitFault("", repo, path, func.qualname, edit.op, edit.lineno,
                                               edit.old, edit.new, found[0], found[1]))
                        kept += 1
                        used.add((path, func.qualname))
                        print(f"  {repo}: {path}::{func.qualname} {edit.op} rank {found[1]} -> {found[0]}", flush=True)
                        break
    finally:
        ws.close()
    return units


FAVOURED_CUE = {"return": "none", "offby1": "number", "cmp": "bool", "not": "bool", "andor": "bool", "bool": "bool"}


def _hopeful(broken: str, path: str, name: str, edit: LineEdit, max_rank: int) -> bool:
    """Could a reader rank the true repair within ``max_rank`` even with the most helpful failure
    message (and no traceback frame inside the function)? Saves test runs that cannot succeed."""
    cue_text = {"none": "None", "number": "1 == 2", "bool": "False"}[FAVOURED_CUE[edit.op]]
    evidence = Evidence(("t",), (Frame("tests/t.py", 1, "t", ()),), (f"assert {cue_text}",))
    assert evidence.cue in CUE_ORDER
    lines = numbered(broken)
    repairs = visible_repairs(lines, name) or []
    ranked = rank_repairs(repairs, evidence, path)
    return any(r.lineno == edit.lineno and r.new == edit.old for r in ranked[:max_rank])


def _passing_at_baseline(ws: Workspace, selection: list[str]) -> list[str]:
    """The tests of ``selection`` that pass on the unmodified copy (some need a network or server)."""
    if not selection:
        return []
    run = run_tests(ws, selection, limits=MINING_LIMITS)
    if run.returncode is None:
        return []
    failing = {node_function(n) for n, v in run.outcomes.items() if v in ("FAILED", "ERROR")}
    return [t for t in selection if t not in failing]


def _unique_context(broken: str, edit: LineEdit) -> bool:
    lines = broken.split("\n")
    old = (lines[edit.lineno - 2] + "\n" if edit.lineno > 1 else "") + edit.new
    return broken.count(old) == 1


def passes_beside(repo: str, unit: UnitFault, others: list[UnitFault], snapshot_root: Path | None = None) -> bool:
    """Do the unit's targeted tests pass on a copy carrying only the ``others``' faults?"""
    ws = Workspace(repo, snapshot_root)
    try:
        inject(ws, others)
        return run_tests(ws, list(unit.tests), limits=MINING_LIMITS).passed
    finally:
        ws.close()


def independent(repo: str, units: list[UnitFault], snapshot_root: Path | None = None) -> list[UnitFault]:
    """Greedy, in mining order: a unit joins when, with the faults of everything kept plus itself,
    each kept unit (and it) passes its tests once only its own fault is removed."""
    kept: list[UnitFault] = []
    for unit in units:
        trial = [*kept, unit]
        if all(passes_beside(repo, u, [o for o in trial if o is not u], snapshot_root) for u in trial[::-1]):
            kept.append(unit)
        else:
            print(f"  {repo}: dropping {unit.function} (its fault and another unit's interfere)", flush=True)
    return kept


def mine(seed: int, per_module: int, max_rank: int, tries_per_function: int, quota: int,
         repos: dict[str, list | None], workers: int = 3, snapshot_root: Path | None = None) -> list[UnitFault]:
    """Every repository's units (``repos``: name -> configured pairs, or None/[] to derive them)."""
    root = snapshot_root or config.SNAPSHOT_SRC

    def one(repo: str) -> list[UnitFault]:
        pairs = mining_pairs(root / repo, repos[repo])
        units = mine_repo(repo, seed, per_module, max_rank, tries_per_function, quota, pairs, snapshot_root)
        return independent(repo, units, snapshot_root)
    with ThreadPoolExecutor(workers) as pool:
        per_repo = list(pool.map(one, sorted(repos)))
    out = []
    for units in per_repo:
        for i, unit in enumerate(sorted(units, key=lambda u: (u.path, u.lineno)), 1):
            out.append(UnitFault(**{**asdict(unit), "unit": f"{unit.repo}-{i:02d}"}))
    return out
