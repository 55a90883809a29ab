"""Tests for the RepoScan environment: every tool, every error path, budgets and the episode end."""

from __future__ import annotations

import json

import pytest

from pushbench.tools import ToolCall
from pushbench.tools.base import MAX_ARGUMENT_CHARS
from pushbench.tasks.reposcan.env import check_identifier

from handmade import FIXTURE_VALID

GOOD = "tests/test_api.py::test_get"  # valid for the fixture predicate (db)
BAD = "tests/test_api.py::test_no_fixture"  # a real unit that does not take db


def call(env, name: str, args) -> object:
    return env.execute(ToolCall(name, args if isinstance(args, (str, dict)) else json.dumps(args)))


def assert_refused(env, name: str, args, *fragments: str):
    """The call is an invalid action: ok False, ERROR text, one step, one failed call record, no verdict."""
    steps, seen = env.steps, len(env.verifier.events)
    obs = call(env, name, args)
    assert obs.ok is False
    assert obs.text.startswith("ERROR: ")
    for fragment in fragments:
        assert fragment in obs.text
    assert env.steps == steps + 1
    new = env.verifier.events[seen:]
    assert [e["kind"] for e in new] == ["call"]
    assert new[0]["ok"] is False and new[0]["error"] == obs.text and new[0]["step"] == steps + 1
    assert new[0]["tool"] == name[:100]
    return obs


@pytest.fixture
def env(make_fixture_env):
    return make_fixture_env()


# --------------------------------------------------------------------------- schemas


def test_tool_schemas(env) -> None:
    schemas = env.schemas()
    assert [s["function"]["name"] for s in schemas] == ["final", "search", "status", "submit"]
    params = {s["function"]["name"]: s["function"]["parameters"] for s in schemas}
    for p in params.values():
        assert p["type"] == "object" and p["additionalProperties"] is False
    assert params["search"]["required"] == ["query"]
    assert params["search"]["properties"]["page"]["default"] == 1
    assert params["submit"]["required"] == ["ids"]
    assert params["status"]["required"] == [] and params["status"]["properties"] == {}
    assert params["final"]["required"] == ["count"]
    json.dumps(schemas)


# --------------------------------------------------------------------------- every error path


@pytest.mark.parametrize(("name", "args", "fragments"), [
    ("browse", {"query": "x"}, ["unknown tool 'browse'", "available tools: final, search, status, submit"]),
    ("", "{}", ["unknown tool ''"]),
    ("search", '{"query": "test db"', ["not valid JSON"]),
    ("search", "{'query': 'x'}", ["not valid JSON"]),
    ("search", '["test db"]', ["must be a JSON object"]),
    ("search", '"test db"', ["must be a JSON object"]),
    ("search", "42", ["must be a JSON object"]),
    ("search", "null", ["must be a JSON object"]),
    ("search", {"query": "test db", "page": "2"}, ["invalid arguments for search"]),
    ("search", {"query": "test db", "page": True}, ["invalid arguments for search"]),
    ("search", {"query": "test db", "page": 0}, ["invalid arguments for search"]),
    ("search", {"query": "test db", "page": 1001}, ["invalid arguments for search"]),
    ("search", {"query": 7}, ["invalid arguments for search"]),
    ("search", {}, ["invalid arguments for search"]),
    ("search", "", ["invalid arguments for search"]),
    ("search", {"query": "test db", "limit": 5}, ["invalid arguments for search"]),
    ("search", {"query": ""}, ["invalid arguments for search"]),
    ("search", {"query": "q" * 201}, ["invalid arguments for search"]),
    ("search", {"query": "test\u0000db"}, ["query must be non-empty text without control characters"]),
    ("search", {"query": "test\ndb"}, ["without control characters"]),
    ("search", {"query": "test\x7fdb"}, ["without control characters"]),
    ("search", {"query": "   "}, ["query must be non-empty"]),
    ("submit", {"ids": GOOD}, ["invalid arguments for submit"]),
    ("submit", {"ids": [1, 2]}, ["invalid arguments for submit"]),
    ("submit", {"ids": []}, ["invalid arguments for submit"]),
    ("submit", {}, ["invalid arguments for submit"]),
    ("submit", {"ids": [GOOD], "force": True}, ["invalid arguments for submit"]),
    ("submit", {"ids": ["../secret.py::f"]}, ["contains '..'", "Nothing was submitted"]),
    ("submit", {"ids": ["tests/../../etc/x.py::f"]}, ["contains '..'"]),
    ("submit", {"ids": ["/etc/passwd.py::f"]}, ["is an absolute path"]),
    ("submit", {"ids": ["C:/x.py::f"]}, ["is an absolute path"]),
    ("submit", {"ids": ["\\\\server\\x.py::f"]}, ["is an absolute path"]),
    ("submit", {"ids": ["tests/test_api.py::test_get\n"]}, ["contains control characters"]),
    ("submit", {"ids": ["tests/\u0000x.py::f"]}, ["contains control characters"]),
    ("submit", {"ids": ["a" * 300 + ".py::f"]}, ["is longer than 300 characters"]),
    ("submit", {"ids": ["tests/test_api.py"]}, ["is not of the form relative/path.py::Qualified.name"]),
    ("submit", {"ids": ["tests/test_api.py::"]}, ["is not of the form"]),
    ("submit", {"ids": [GOOD, "not an id"]}, ["'not an id'", "Nothing was submitted"]),
    ("status", {"verbose": True}, ["invalid arguments for status"]),
    ("status", "[]", ["must be a JSON object"]),
    ("final", {}, ["invalid arguments for final"]),
    ("final", {"count": -1}, ["invalid arguments for final"]),
    ("final", {"count": "3"}, ["invalid arguments for final"]),
    ("final", {"count": 3, "why": "done"}, ["invalid arguments for final"]),
])
def test_error_paths_are_invalid_actions(env, name: str, args, fragments: list[str]) -> None:
    assert_refused(env, name, args, *fragments)
    assert env.done is False and env.verifier.valid_count == 0
    assert not [e for e in env.verifier.events if e["kind"] == "verdict"]


def test_oversize_arguments_are_refused_before_parsing(env) -> None:
    text = json.dumps({"query": "q" * MAX_ARGUMENT_CHARS})
    assert_refused(env, "search", text, f"the limit is {MAX_ARGUMENT_CHARS}")
    assert env.verifier.events[-1]["args"] == text[:500]  # the logged payload is cut
    assert_refused(env, "submit", {"ids": ["x" * 9000 + ".py::f"]}, f"exceed {MAX_ARGUMENT_CHARS}")
    assert_refused(env, "search", "{" * (MAX_ARGUMENT_CHARS + 1), "the limit is")


def test_more_than_max_submit_ids_submits_nothing(make_fixture_env) -> None:
    env = make_fixture_env()
    ids = [GOOD] + [f"tests/test_api.py::test_{i}" for i in range(20)]
    obs = assert_refused(env, "submit", {"ids": ids}, "at most 20 ids per submit call; you sent 21",
                         "Nothing was submitted")
    assert obs.done is False
    assert not [e for e in env.verifier.events if e["kind"] == "verdict"]
    # the same id is accepted afterwards: it was never judged
    assert "1 accepted" in call(env, "submit", {"ids": [GOOD]}).text

    small = make_fixture_env(max_submit=2)
    assert_refused(small, "submit", {"ids": [GOOD, BAD, GOOD]}, "at most 2 ids per submit call; you sent 3")
    assert call(small, "submit", {"ids": [GOOD, BAD]}).ok


@pytest.mark.parametrize("limit", [2, 20])
def test_the_submit_schema_states_the_enforced_limit(make_fixture_env, limit: int) -> None:
    env = make_fixture_env(max_submit=limit)
    submit = {s["function"]["name"]: s["function"] for s in env.schemas()}["submit"]
    assert submit["parameters"]["properties"]["ids"]["maxItems"] == limit
    assert f"At most {limit} identifiers per call." in submit["description"]
    ids = [f"tests/test_api.py::test_{i}" for i in range(limit + 1)]
    assert call(env, "submit", {"ids": ids[:limit]}).ok
    assert_refused(env, "submit", {"ids": ids}, f"at most {limit} ids per submit call")


def test_a_bad_id_in_a_batch_submits_nothing(env) -> None:
    assert_refused(env, "submit", {"ids": [GOOD, "../x.py::f"]}, "Nothing was submitted")
    obs = call(env, "submit", {"ids": [GOOD]})
    assert obs.text.splitlines()[0] == "submit: 1 accepted, 0 rejected, 0 duplicate"


@pytest.mark.parametrize("page", [2.0, 1.0])
def test_integral_float_page_never_raises(env, page: float) -> None:
    obs = call(env, "search", json.dumps({"query": "test db", "page": page}))
    assert env.steps == 1
    assert len([e for e in env.verifier.events if e["kind"] == "call"]) == 1
    assert obs.ok is False or obs.text.startswith('search "test db": page ')


# --------------------------------------------------------------------------- tools that work


def test_search_observation_and_log(env) -> None:
    obs = call(env, "search", {"query": "  test db  "})
    assert obs.ok and not obs.done
    lines = obs.text.splitlines()
    assert lines[0] == 'search "test db": page 1 of 2 (17 results)'
    hits = [l for l in lines if l.startswith("[")]
    assert len(hits) == 10 and hits[0].startswith("[1] ") and hits[-1].startswith("[10] ")
    assert all(l.startswith("    L") for l in lines[1:] if not l.startswith("["))
    record = env.verifier.events[-1]
    assert record["kind"] == "call" and record["ok"] is True and record["args"] == {"query": "  test db  ", "page": 1}
    assert record["info"]["results"] == 17 and record["info"]["pages"] == 2
    assert record["info"]["ids"] == [l.split(" ", 1)[1] for l in hits]
    second = call(env, "search", '{"query": "test db", "page": 2}')
    assert second.text.splitlines()[0] == 'search "test db": page 2 of 2 (17 results)'
    assert "[11] " in second.text and "[17] " in second.text and "[18] " not in second.text
    third = call(env, "search", '{"query": "test db", "page": 3}')
    assert third.ok and third.text == 'search "test db": no results on page 3 (17 results in 2 pages).'
    assert env.steps == 3


def test_submit_status_final_flow(env) -> None:
    obs = call(env, "submit", {"ids": [GOOD, BAD, GOOD, "tests/test_api.py::TestClient.test_method"]})
    assert obs.ok
    assert obs.text.splitlines() == [
        "submit: 2 accepted, 1 rejected, 1 duplicate",
        f"  accepted  {GOOD}",
        f"  rejected  {BAD}",
        f"  duplicate {GOOD}",
        "  accepted  tests/test_api.py::TestClient.test_method",
    ]
    again = call(env, "submit", {"ids": [BAD, GOOD]})
    assert again.text.splitlines()[0] == "submit: 0 accepted, 0 rejected, 2 duplicate"
    status = call(env, "status", "")
    assert status.text == "status: 2 accepted (verified) of target 3; 3 of 30 steps used."
    final = call(env, "final", {"count": 5})
    assert final.ok and final.done and env.done and env.termination == "final"
    (end,) = [e for e in env.verifier.events if e["kind"] == "end"]
    assert (end["reason"], end["reported"], end["valid_count"], end["step"]) == ("final", 5, 2, 4)
    # after the end every call is refused, costs nothing and is not logged
    before = list(env.verifier.events)
    for name, args in [("search", {"query": "x"}), ("submit", {"ids": [GOOD]}), ("status", {}), ("nope", "{")]:
        late = call(env, name, args)
        assert late.ok is False and late.done is True and "episode has ended" in late.text
    assert env.steps == 4 and env.verifier.events == before


def test_every_submit_verdict_matches_the_hidden_set(env) -> None:
    ids = sorted(u for u in FIXTURE_VALID["fixture"] | FIXTURE_VALID["calls"])
    obs = call(env, "submit", {"ids": ids})
    for line in obs.text.splitlines()[1:]:
        verdict, item = line.split()
        assert verdict == ("accepted" if item in FIXTURE_VALID["fixture"] else "rejected")
    assert env.verifier.valid_count == len(FIXTURE_VALID["fixture"])


def test_budget_exhaustion_ends_the_episode(make_fixture_env) -> None:
    env = make_fixture_env(budget=3)
    assert call(env, "status", {}).done is False
    assert call(env, "search", "{oops").done is False
    last = call(env, "submit", {"ids": [GOOD]})
    assert last.ok and last.done
    assert last.text.endswith("\n[The step budget of 3 tool calls is used up; the episode ends.]")
    assert env.done and env.termination == "budget" and env.steps == 3
    ends = [e for e in env.verifier.events if e["kind"] == "end"]
    assert len(ends) == 1 and ends[0]["reason"] == "budget" and ends[0]["step"] == 3
    assert ends[0]["valid_count"] == 1 and ends[0]["reported"] is None
    refused = call(env, "final", {"count": 1})
    assert refused.ok is False and refused.done and env.steps == 3 and env.termination == "budget"


def test_an_invalid_last_call_also_exhausts_the_budget(make_fixture_env) -> None:
    env = make_fixture_env(budget=1)
    obs = call(env, "nope", {})
    assert obs.ok is False and obs.done and env.termination == "budget"


def test_final_on_the_last_step_is_a_final(make_fixture_env) -> None:
    env = make_fixture_env(budget=2)
    call(env, "status", {})
    obs = call(env, "final", {"count": 0})
    assert obs.done and env.termination == "final"
    assert "budget" not in obs.text
    assert [e["reason"] for e in env.verifier.events if e["kind"] == "end"] == ["final"]


def test_event_log_of_an_episode(make_fixture_env) -> None:
    env = make_fixture_env(budget=8)
    script = [("search", {"query": "test db"}), ("submit", {"ids": [GOOD, BAD]}), ("search", "{"),
              ("submit", {"ids": [GOOD]}), ("status", {}), ("final", {"count": 1})]
    for name, args in script:
        call(env, name, args)
    events = env.verifier.events
    assert [e["seq"] for e in events] == list(range(len(events)))
    calls = [e for e in events if e["kind"] == "call"]
    assert [e["step"] for e in calls] == [1, 2, 3, 4, 5, 6] and env.steps == 6
    assert [e["tool"] for e in calls] == ["search", "submit", "search", "submit", "status", "final"]
    assert [e["ok"] for e in calls] == [True, True, False, True, True, True]
    submit_steps = {e["step"] for e in calls if e["tool"] == "submit"}
    verdicts = [(e["step"], e["item"], e["verdict"]) for e in events if e["kind"] == "verdict"]
    assert verdicts == [(2, GOOD, "accepted"), (2, BAD, "rejected"), (4, GOOD, "duplicate")]
    assert {s for s, _, _ in verdicts} <= submit_steps
    ends = [e for e in events if e["kind"] == "end"]
    assert len(ends) == 1 and ends[0]["step"] == 6 and all(e["step"] <= 6 for e in events)


# --------------------------------------------------------------------------- identifiers


@pytest.mark.parametrize(("item", "problem"), [
    ("tests/test_api.py::test_get", None),
    ("src/a-b/c_d.py::Class.method", None),
    ("a.py::_private", None),
    ("../a.py::f", "contains '..'"),
    ("a/../../b.py::f", "contains '..'"),
    ("/abs/a.py::f", "is an absolute path"),
    ("\\a.py::f", "is an absolute path"),
    ("c:/a.py::f", "is an absolute path"),
    ("a.py::f\t", "contains control characters"),
    ("a.py::f\x7f", "contains control characters"),
    ("a" * 301, "is longer than 300 characters"),
    ("a.txt::f", "is not of the form relative/path.py::Qualified.name"),
    ("a.py::1f", "is not of the form relative/path.py::Qualified.name"),
    ("a.py::f()", "is not of the form relative/path.py::Qualified.name"),
    ("./a.py::f", "is not of the form relative/path.py::Qualified.name"),
    ("a.py:f", "is not of the form relative/path.py::Qualified.name"),
    ("a b.py::f", "is not of the form relative/path.py::Qualified.name"),
])
def test_check_identifier(item: str, problem: str | None) -> None:
    assert check_identifier(item) == problem


# --------------------------------------------------------------------------- a real task


def test_real_task_environment(real_env, hidden_valid) -> None:
    sunk: list[dict] = []
    env = real_env("reposcan-requests-fixture-n010", sink=sunk.append)
    assert env.task.budget == 30 and env.max_submit == 20
    obs = call(env, "search", {"query": "test httpbin", "page": 1})
    assert obs.ok and obs.text.splitlines()[0] == 'search "test httpbin": page 1 of 5 (50 results)'
    assert "\n[1] tests/" in obs.text
    shown = env.verifier.events[-1]["info"]["ids"]
    valid = hidden_valid("reposcan-requests-fixture-n010")
    good = [u for u in shown if u in valid][:2]
    result = call(env, "submit", {"ids": good + ["tests/test_requests.py::no_such_test"]})
    assert result.text.splitlines()[0] == f"submit: {len(good)} accepted, 1 rejected, 0 duplicate"
    assert env.verifier.valid_count == len(good) >= 1
    assert sunk == env.verifier.events
