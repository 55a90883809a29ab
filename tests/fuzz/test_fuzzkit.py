"""The fuzz invariants catch what they claim to: a leaked id, a wrong status, a miscount, a changed file."""

from __future__ import annotations

from pathlib import Path

import pytest

from pushbench.tasks import load_tasks, manifest_path

from fuzz_profiles import digest_tree
from fuzzkit import Episode, args_text, check_leaks, check_status
from test_fuzz_rows import RowsFuzz


@pytest.fixture
def rows_env():
    if not manifest_path("rows").is_file():
        pytest.skip("no rows manifest")
    fuzz = RowsFuzz(load_tasks("rows")[0])
    env = fuzz.make_env(100)
    yield fuzz, env
    env.end("test-cleanup")


def test_a_valid_id_nobody_showed_is_a_leak(rows_env) -> None:
    fuzz, env = rows_env
    hidden = sorted(fuzz.valid)[0]
    with pytest.raises(AssertionError, match="revealed the hidden value"):
        check_leaks(env, fuzz, Episode(agent_text=["submit"]), "submit", {"ids": ["r9999"]},
                    f"submit: 1 rejected\n  rejected  r9999\nhint: try {hidden}")


def test_an_echo_or_an_earlier_view_is_not_a_leak(rows_env) -> None:
    fuzz, env = rows_env
    hidden = sorted(fuzz.valid)[0]
    echoed = Episode(agent_text=[args_text({"ids": [hidden]})])
    check_leaks(env, fuzz, echoed, "submit", {"ids": [hidden]}, f"submit: 1 accepted\n  accepted  {hidden}")
    viewed = Episode(agent_text=["rows"])
    check_leaks(env, fuzz, viewed, "rows", {"page": 1}, f"{hidden},5.1,3.5")  # a reading tool shows it
    check_leaks(env, fuzz, viewed, "final", {"count": 1}, f"you once saw {hidden}")


def test_forbidden_paths_and_a_wrong_status_are_caught(rows_env) -> None:
    fuzz, env = rows_env
    with pytest.raises(AssertionError, match="data/hidden"):
        check_leaks(env, fuzz, Episode(), "status", {}, "see data/hidden/rows/x.json")
    with pytest.raises(AssertionError):
        check_status(env, fuzz, f"status: 5 accepted (verified) of target {env.task.target}; 0 of 100 steps used.")
    check_status(env, fuzz, f"status: 0 accepted (verified) of target {env.task.target}; 0 of 100 steps used.")


def test_the_accounting_check_catches_an_accepted_id_never_submitted(rows_env) -> None:
    fuzz, env = rows_env
    env.verifier.accepted.add(sorted(fuzz.valid)[0])
    with pytest.raises(AssertionError, match="accepted set"):
        fuzz.check_accounting(env, Episode())


def test_the_tree_digest_sees_a_changed_byte(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "f.txt").write_text("one", encoding="utf-8")
    (tmp_path / "tmp").mkdir()
    before = digest_tree(tmp_path, skip=("tmp",))
    (tmp_path / "tmp" / "cache").write_text("ignored", encoding="utf-8")
    assert digest_tree(tmp_path, skip=("tmp",)) == before
    (tmp_path / "a" / "f.txt").write_text("onE", encoding="utf-8")
    assert digest_tree(tmp_path, skip=("tmp",)) != before


def test_an_echo_of_the_agents_own_argument_is_not_a_leak() -> None:
    from fuzzkit import without_echoes

    own = '{"unit": "data/hidden"}\nrun_checker'
    assert "data/hidden" not in without_echoes("ERROR: unit 'data/hidden' is not a unit id", own)
    assert "data/hidden" in without_echoes("ERROR: see 'data/hidden/dataops/x.json'", own)  # more than the echo
