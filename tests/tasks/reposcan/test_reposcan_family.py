"""Tests for the RepoScan family: predicates (truth), the reader (judge_hit), objectives, oracle, build."""

from __future__ import annotations

import textwrap
from collections import Counter
from pathlib import Path

import pytest
from pydantic import ValidationError

from pushbench.tasks.reposcan.codeindex import load_units, tokenize, units_of_file
from pushbench.tasks.reposcan.search import search_for, snippet
from pushbench.tasks import FAMILIES, get_family, load_tasks, manifest_path
from pushbench.tasks.base import TaskSpec, read_manifest, write_manifest
from pushbench.tasks.reposcan.family import RepoScanFamily, holds, oracle_steps
from pushbench.tasks.reposcan.reader import (OBJECTIVES, PREDICATES, Goal, expansion_terms, judge_hit, name_tokens,
                                             objective_text, parse_objective)
from pushbench.tools import ToolCall
from pushbench.verifier import write_hidden

from handmade import FIXTURE_ARGS, FIXTURE_VALID

REAL = {"requests": ("httpbin", "requests."), "flask": ("app", "client."),
        "pytest": ("monkeypatch", "pytester.runpytest")}


def goal(predicate: str, target: int = 3, repo: str = "fixt") -> Goal:
    return Goal(repo, predicate, FIXTURE_ARGS[predicate], target)


def shown(hit) -> list:
    return list(hit.snippet)  # numbered lines, as the agent sees them


# --------------------------------------------------------------------------- the truth


@pytest.mark.parametrize("predicate", PREDICATES)
def test_holds_gives_the_exact_valid_sets(fixture_units, predicate: str) -> None:
    valid = {u.uid for u in fixture_units if holds(goal(predicate), u)}
    assert valid == FIXTURE_VALID[predicate]


def test_holds_details(fixture_units) -> None:
    by_uid = {u.uid: u for u in fixture_units}
    fixture, documented, calls = goal("fixture"), goal("documented"), goal("calls")
    # kw-only parameters count; a parameter whose name only starts with the fixture's does not
    assert holds(fixture, by_uid["tests/test_api.py::test_kwonly"])
    assert not holds(fixture, by_uid["tests/test_api.py::TestClient.test_database"])
    # a non-test function taking the fixture is not valid
    assert not holds(fixture, by_uid["tests/test_api.py::helper_uses_api"])
    # documented tests and classes are not 'documented'
    assert not holds(documented, by_uid["tests/test_api.py::test_no_call"])
    assert not holds(documented, by_uid["pkg/api.py::Client"])
    # a reference is not a call; a call through a local name is not an `api.` call
    assert not holds(calls, by_uid["tests/test_api.py::test_reference_only"])
    assert not holds(calls, by_uid["tests/test_api.py::TestClient.test_method"])
    # calls inside nested functions and chained calls count
    assert holds(calls, by_uid["tests/test_api.py::test_nested_call"])
    assert holds(calls, by_uid["tests/test_api.py::test_multiline"])
    with pytest.raises(ValueError, match="unknown predicate"):
        holds(Goal("fixt", "imports", "", 1), by_uid["pkg/api.py::get"])


def test_posonly_parameters_and_other_fixtures(tmp_path: Path) -> None:
    path = tmp_path / "test_x.py"
    path.write_text(textwrap.dedent("""\
        def test_posonly(db, /, other):
            pass

        def test_star(*db, **kw):
            pass

        def test_default(db=None):
            pass
        """), encoding="utf-8")
    units = {u.qualname: u for u in units_of_file(path, "test_x.py")}
    assert holds(goal("fixture"), units["test_posonly"])
    assert holds(goal("fixture"), units["test_default"])
    assert not holds(goal("fixture"), units["test_star"])  # *db is not a fixture parameter


# --------------------------------------------------------------------------- the reader


@pytest.mark.parametrize("predicate", PREDICATES)
def test_judge_hit_agrees_with_the_truth_on_every_hit(fixture_search, predicate: str) -> None:
    g = goal(predicate)
    units = {u.uid: u for u in fixture_search.units}
    judged = Counter()
    for query in [g.seed_query, "test", "api", "db", "return", "fetch", "client", "def", "helper", "tmp"]:
        for number in range(1, 4):
            for hit in fixture_search.page(query, number).hits:
                verdict = judge_hit(g, hit.uid, shown(hit))
                truth = holds(g, units[hit.uid])
                judged[verdict] += 1
                if predicate == "calls" and verdict is None:
                    continue  # the call is not among the lines shown: undecidable, never wrong
                assert verdict is truth, (query, hit.uid, shown(hit))
    assert judged[True] and judged[False]
    if predicate != "calls":
        assert judged[None] == 0


def test_judge_hit_cases() -> None:
    fixture, documented, calls = goal("fixture"), goal("documented"), goal("calls")
    assert judge_hit(fixture, "t.py::test_a", ["def test_a(self, db: Database = None) -> None:"]) is True
    assert judge_hit(fixture, "t.py::test_a", ["def test_a(", "    tmp,", "    db,", "):"]) is True
    assert judge_hit(fixture, "t.py::test_a", ["def test_a(self, database):"]) is False
    assert judge_hit(fixture, "t.py::helper", ["def helper(db):"]) is False  # not a test
    assert judge_hit(fixture, "t.py::TestA", ["class TestA:", "    def test_a(self, db):"]) is False
    assert judge_hit(fixture, "t.py::test_a", ["async def test_a(db):"]) is True
    assert judge_hit(documented, "m.py::f", ["def f(x):", '    """Do it.', "    return x"]) is True
    assert judge_hit(documented, "m.py::f", ["def f(x):", "    return x"]) is False
    assert judge_hit(documented, "m.py::test_f", ["def test_f(x):", '    """Do it.']) is False
    assert judge_hit(calls, "t.py::test_a", ["def test_a(db):", '    r = api.get("x")']) is True
    assert judge_hit(calls, "t.py::test_a", ["def test_a(db):", "    x = 1"]) is None  # not visible
    assert judge_hit(calls, "t.py::test_a", ["def test_a(db):", "    self.api.get(1)"]) is None
    assert judge_hit(calls, "t.py::helper", ["def helper():", "    api.get(1)"]) is False
    assert judge_hit(calls, "t.py::test_a", ["def test_api(db):"]) is False  # another function's signature


def test_judge_hit_agrees_with_the_truth_on_real_seed_queries(snapshot_root: Path) -> None:
    for repo, (fixture, calls) in REAL.items():
        search = search_for(snapshot_root / repo, 50, 10)
        units = {u.uid: u for u in load_units(snapshot_root / repo)}  # with their AST (a search's have none)
        for predicate, arg in (("fixture", fixture), ("documented", ""), ("calls", calls)):
            g = Goal(repo, predicate, arg, 10)
            for number in range(1, 6):
                for hit in search.page(g.seed_query, number).hits:
                    verdict = judge_hit(g, hit.uid, shown(hit))
                    if verdict is not None:
                        assert verdict is holds(g, units[hit.uid]), (repo, predicate, hit.uid)


@pytest.mark.parametrize(("repo", "predicate", "uid", "why"), [
    ("pytest", "documented", "src/_pytest/doctest.py::DoctestItem.from_parent",
     "a comment between the signature and the docstring is kept in the header (codeindex._make_unit)"),
    ("pytest", "documented", "src/_pytest/config/__init__.py::Config.__init__",
     "an attribute docstring in the body is read as the function's docstring (judge_hit)"),
    ("pytest", "calls", "testing/test_assertion.py::test_comparisons_handle_colors",
     "a 'def test():' inside a decorator string is taken for the signature (judge_hit._DEF)"),
])
def test_judge_hit_on_known_hard_real_units(snapshot_root: Path, repo: str, predicate: str, uid: str,
                                            why: str) -> None:
    fixture, calls = REAL[repo]
    g = Goal(repo, predicate, {"fixture": fixture, "documented": "", "calls": calls}[predicate], 10)
    unit = {u.uid: u for u in load_units(snapshot_root / repo)}[uid]  # with its AST node
    lines = snippet(unit, set(tokenize(g.seed_query)), g.seed_query)  # numbered, as the agent sees them
    assert judge_hit(g, uid, lines) in (holds(g, unit), None), why


def test_judge_hit_reads_the_hits_own_signature() -> None:
    lines = ['@pytest.mark.parametrize("code", ["""', "    def test():", '        pass', '    """])',
             "def test_outer(code, db):", "    api.get(code)"]
    assert judge_hit(goal("fixture"), "t.py::test_outer", lines) is True
    assert judge_hit(goal("calls"), "t.py::test_outer", lines) is True


def test_attribute_docstrings_are_not_the_functions_docstring(tmp_path: Path) -> None:
    path = tmp_path / "cfg.py"
    path.write_text(textwrap.dedent('''\
        class Config:
            def __init__(self, args):
                self.args = args

                """The arguments the program was invoked with."""
        '''), encoding="utf-8")
    unit = {u.qualname: u for u in units_of_file(path, "cfg.py")}["Config.__init__"]
    g = goal("documented")
    assert not holds(g, unit)
    lines = snippet(unit, set(tokenize("the arguments")), "the arguments")  # numbered, as shown
    assert judge_hit(g, unit.uid, lines) is False


# --------------------------------------------------------------------------- objectives


@pytest.mark.parametrize("g", [
    Goal("requests", "fixture", "httpbin", 10), Goal("flask", "calls", "client.", 25),
    Goal("pytest", "calls", "pytester.runpytest", 100), Goal("flask", "documented", "", 50),
    Goal("my-repo.x", "fixture", "tmp_path", 1),
])
def test_objective_text_carries_its_goal(g: Goal) -> None:
    text = objective_text(g)
    assert parse_objective(text) == g
    assert f"Find {g.target} distinct" in text and f"`{g.repo}`" in text
    assert "::" in text and "path/to/file.py::Class.function" in text  # the format hint, not an id
    assert parse_objective("Find some things in a repository.") is None


def test_seed_queries() -> None:
    assert Goal("r", "documented", "", 1).seed_query == "return the"
    assert Goal("r", "fixture", "httpbin", 1).seed_query == "test httpbin"
    assert Goal("r", "calls", "client.", 1).seed_query == "test client"
    assert Goal("r", "calls", "pytester.runpytest", 1).seed_query == "test pytester.runpytest"
    assert set(OBJECTIVES) == set(PREDICATES)


def test_name_tokens_and_expansion_terms() -> None:
    assert list(name_tokens("tests/test_requests.py::TestRequests.test_cookie_sent")) == \
        ["test", "cookie", "sent", "test", "requests"]
    g = Goal("requests", "fixture", "httpbin", 10)
    names = Counter({"redirect": 3, "cookie": 2, "cookies": 2, "test": 9, "httpbin": 8, "db": 5, "the": 4,
                     "123": 6, "auth": 3})
    assert expansion_terms(g, names, set()) == ["test httpbin auth", "test httpbin redirect",
                                                "test httpbin cookie", "test httpbin cookies"]
    assert expansion_terms(g, names, {"test httpbin auth"}) == ["test httpbin redirect", "test httpbin cookie",
                                                                "test httpbin cookies"]


# --------------------------------------------------------------------------- the oracle


@pytest.mark.parametrize(("predicate", "target", "steps"), [
    ("fixture", 1, 3), ("fixture", 9, 3),  # page 1 of "test db" shows all nine: search, submit, final
    ("documented", 5, 3), ("documented", 6, 5), ("documented", 7, 5),  # a second page is needed
    ("calls", 5, 3), ("calls", 8, 5),
])
def test_oracle_steps_on_the_fixture_repo(fixture_search, predicate: str, target: int, steps: int) -> None:
    assert oracle_steps(goal(predicate, target), fixture_search) == steps


@pytest.mark.parametrize(("predicate", "target", "reach"), [("fixture", 10, 9), ("documented", 8, 7),
                                                            ("calls", 9, 8)])
def test_oracle_raises_when_natural_queries_fall_short(fixture_search, predicate: str, target: int,
                                                       reach: int) -> None:
    with pytest.raises(ValueError, match=f"natural queries reach only {reach} valid items"):
        oracle_steps(goal(predicate, target), fixture_search)


# --------------------------------------------------------------------------- build and environment

FIXT_PARAMS = {"repos": {"fixt": {"fixture": "db", "calls": "api."}}, "targets": [3, 5],
               "budgets": {3: 10, 5: 20}, "page_size": 10, "max_results": 50, "max_submit": 20,
               "min_valid": 5, "max_oracle_fraction": 0.6}


def test_family_builds_tasks_from_params(fixture_repo: Path) -> None:
    built = RepoScanFamily().build(FIXT_PARAMS, snapshot_root=fixture_repo.parent)
    ids = [b.spec.task_id for b in built]
    assert ids == [f"reposcan-fixt-{p}-n{n:03d}" for p in PREDICATES for n in (3, 5)]
    for b in built:
        spec = b.spec
        assert b.hidden == {"task_id": spec.task_id, "valid": sorted(FIXTURE_VALID[spec.predicate])}
        assert spec.budget == FIXT_PARAMS["budgets"][spec.target]
        assert spec.oracle_steps == 3 and spec.tools == ["search", "submit", "status", "final"]
        assert spec.settings == {"page_size": 10, "max_results": 50, "max_submit": 20,
                                 "predicate_arg": FIXTURE_ARGS[spec.predicate]}
        assert parse_objective(spec.objective) == Goal("fixt", spec.predicate, FIXTURE_ARGS[spec.predicate],
                                                       spec.target)
        assert not any(uid in spec.model_dump_json() for uid in b.hidden["valid"])


def test_family_refuses_small_valid_sets_and_expensive_oracles(fixture_repo: Path) -> None:
    with pytest.raises(ValueError, match=r"fixt/fixture: 9 valid items < 10"):
        RepoScanFamily().build({**FIXT_PARAMS, "min_valid": 10}, snapshot_root=fixture_repo.parent)
    with pytest.raises(ValueError, match="oracle needs 3 steps, over 20% of the budget 10"):
        RepoScanFamily().build({**FIXT_PARAMS, "max_oracle_fraction": 0.2}, snapshot_root=fixture_repo.parent)


def test_family_environment_on_the_fixture_repo(fixture_repo: Path, tmp_path: Path) -> None:
    family = get_family("reposcan")
    built = family.build(FIXT_PARAMS, snapshot_root=fixture_repo.parent)
    hidden_root = tmp_path / "hidden"
    for b in built:
        write_hidden("reposcan", b.spec.task_id, b.hidden, hidden_root)
    spec = next(b.spec for b in built if b.spec.task_id == "reposcan-fixt-calls-n005")
    env = family.environment(spec, snapshot_root=fixture_repo.parent, hidden_root=hidden_root)
    obs = env.execute(ToolCall("search", '{"query": "test api"}'))
    ids = env.verifier.events[-1]["info"]["ids"]
    obs = env.execute(ToolCall("submit", {"ids": ids}))
    assert obs.text.splitlines()[0] == "submit: 5 accepted, 5 rejected, 0 duplicate"
    assert env.execute(ToolCall("final", {"count": 5})).done
    end = [e for e in env.verifier.events if e["kind"] == "end"][0]
    assert (end["valid_count"], end["target"], end["reason"]) == (5, 5, "final")


def test_registry_and_manifest_io(tmp_path: Path) -> None:
    assert "reposcan" in FAMILIES and get_family("reposcan").name == "reposcan"
    with pytest.raises(KeyError, match="unknown task family 'nope'"):
        get_family("nope")
    with pytest.raises(FileNotFoundError, match="pushbench manifests build"):
        load_tasks("reposcan", tmp_path)
    specs = [TaskSpec(task_id=t, family="reposcan", repo="r", predicate="fixture", objective="o", target=1,
                      budget=2, tools=["search"], oracle_steps=1) for t in ("b-task", "a-task")]
    write_manifest(manifest_path("reposcan", tmp_path), specs)
    text = (tmp_path / "reposcan.jsonl").read_text(encoding="utf-8")
    assert text.endswith("}\n") and text.splitlines()[0].startswith('{"budget": 2, "family": "reposcan"')
    assert [s.task_id for s in read_manifest(tmp_path / "reposcan.jsonl")] == ["a-task", "b-task"]
    assert load_tasks("reposcan", tmp_path) == sorted(specs, key=lambda s: s.task_id)
    with pytest.raises(ValidationError):  # a manifest row may not carry answers
        TaskSpec.model_validate({**specs[0].model_dump(), "valid": ["a.py::f"]})
    with pytest.raises(ValidationError):  # specs are frozen
        specs[0].target = 5
