"""RepoScan's requirements (count, distinct, predicate) and the origins of its tool calls."""

from __future__ import annotations

import pytest

from pushbench.tasks.reposcan.env import RepoScanEnv
from pushbench.tools.items import first_sentence
from pushbench.verifier import Verifier

from agentkit import data_missing, task as real_task
from handmade import make_spec

OBJECTIVE = ("Find 3 distinct test functions in the `fixt` repository whose body calls `api.` (any call whose "
             "name starts with `api.`). Use search(query, page) to find candidates.")


@pytest.fixture
def env(fixture_search) -> RepoScanEnv:
    spec = make_spec(predicate="calls").model_copy(update={"objective": OBJECTIVE})
    return RepoScanEnv(spec, fixture_search, Verifier(spec.task_id, spec.target, lambda _: True))


def test_three_requirements_from_the_task(env) -> None:
    reqs = env.requirements()
    assert [(r.id, r.kind) for r in reqs] == [("count", "count"), ("distinct", "distinct"), ("predicate", "predicate")]
    assert "3" in reqs[0].text and "3" in reqs[1].text
    assert reqs[2].text == ("Find 3 distinct test functions in the `fixt` repository whose body calls `api.` "
                            "(any call whose name starts with `api.`).")


@pytest.mark.parametrize("tool, arguments, expected", [
    ("submit", {"ids": ["tests/test_api.py::test_get"]}, ("count", "distinct", "predicate")),
    ("search", {"query": "api", "page": 2}, ("predicate",)),
    ("status", {}, ("count",)),
    ("final", {"count": 3}, ("count",)),
    ("delete_everything", {}, ()),  # not a tool of this environment: serves nothing
])
def test_origins_follow_the_tool(env, tool, arguments, expected) -> None:
    assert env.action_origins(tool, arguments) == expected


def test_the_ids_a_call_names_are_not_requirements(env) -> None:
    assert env.action_origins("submit", {"ids": ["count", "unit:U01"]}) == ("count", "distinct", "predicate")


def test_a_requirement_argument_is_validated(env) -> None:
    assert env.action_origins("status", {"requirement": ["distinct", "bogus"]}) == ("count", "distinct")
    assert env.action_origins("search", {"query": "x", "requirement": "nope"}) == ("predicate",)


def test_first_sentence_keeps_dotted_words() -> None:
    assert first_sentence("Keep `a.b` and 6.5 here. Then more.") == "Keep `a.b` and 6.5 here."
    assert first_sentence("no full stop") == "no full stop"


@pytest.mark.skipif(data_missing() is not None, reason="needs snapshots and manifests")
def test_a_real_task_states_its_predicate(make_fixture_env) -> None:
    spec = real_task()
    env = make_fixture_env()
    env.task = spec  # only the task is read
    predicate = env.requirements()[2].text
    assert predicate.startswith(f"Find {spec.target} distinct") and predicate.endswith(".")
    assert "search(" not in predicate
