"""Leak tests: the agent-facing side sees the snapshot and nothing else.

No tool reads outside the snapshot tree (symlinks are not followed), identifiers that point outside
are refused before the verifier sees them, manifests and objectives carry no answers, the search
index holds no hidden data, and no schema or observation mentions the hidden answers.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pushbench.tasks.reposcan.codeindex import load_units, tokenize
from pushbench.tasks.reposcan.search import CodeSearch, search_for
from pushbench.tools import ToolCall
from pushbench.tasks.reposcan.env import RepoScanEnv
from pushbench.verifier import Verifier

from handmade import FIXTURE_FILES, REPOS, make_spec, write_tree

SECRET = '''\
def leaked_zebracorn_secret(password):
    """Quixotically hidden answer text."""
    return "zebracorn-password-4711"
'''
SECRET_TOKENS = ["zebracorn", "quixotically", "leaked", "secret", "password", "4711"]


@pytest.fixture
def planted_repo(tmp_path: Path) -> Path:
    """The fixture repo plus symlinks to a secret file and a secret folder outside it."""
    outside = tmp_path / "outside"
    (outside / "pkg").mkdir(parents=True)
    (outside / "secret.py").write_text(SECRET, encoding="utf-8")
    (outside / "pkg" / "mod.py").write_text(SECRET, encoding="utf-8")
    repo = write_tree(tmp_path / "snaps" / "fixt", FIXTURE_FILES)
    os.symlink(outside / "secret.py", repo / "pkg" / "linked.py")  # a symlinked .py file
    os.symlink(outside / "pkg", repo / "linkdir")  # a symlinked folder holding .py files
    os.symlink(outside / "pkg", repo / "tests" / "looks_like.py")  # a symlinked folder named *.py
    os.symlink("../../outside/secret.py", repo / "relative.py")  # a relative link out of the tree
    os.symlink(repo, repo / "tests" / "loop")  # a loop back into the tree
    return repo


def test_symlinks_out_of_the_tree_are_not_indexed(planted_repo: Path) -> None:
    units = load_units(planted_repo)
    paths = {u.path for u in units}
    assert paths == {"pkg/api.py", "tests/conftest.py", "tests/test_api.py"}
    for unit in units:
        assert (planted_repo / unit.path).resolve().is_relative_to(planted_repo.resolve())
        text = unit.text().lower()
        assert not any(token in text for token in SECRET_TOKENS)


def test_search_never_returns_the_secret(planted_repo: Path) -> None:
    search = CodeSearch(load_units(planted_repo))
    for token in SECRET_TOKENS:
        assert token not in search._vocab
        assert search.ranked(token) == ()
    spec = make_spec()
    env = RepoScanEnv(spec, search, Verifier(spec.task_id, 3, lambda item: False))
    obs = env.execute(ToolCall("search", {"query": "zebracorn leaked secret password"}))
    assert obs.ok and obs.text.startswith('search "zebracorn leaked secret password": no results on page 1 (0 results')
    assert "zebracorn" not in env.execute(ToolCall("search", {"query": "test db"})).text


def test_ids_pointing_outside_are_refused_before_the_verifier(fixture_search) -> None:
    asked: list[str] = []

    def accepts(item: str) -> bool:
        asked.append(item)
        return True

    spec = make_spec(budget=50)
    env = RepoScanEnv(spec, fixture_search, Verifier(spec.task_id, 3, accepts))
    for item in ["../outside/secret.py::leaked_zebracorn_secret", "pkg/../../outside/secret.py::f",
                 "/tmp/outside/secret.py::f", "\\\\host\\share\\x.py::f", "C:\\x.py::f",
                 "../../data/hidden/reposcan/x.py::f", "pkg/\x00.py::f", "pkg/api.py::get\r\n"]:
        obs = env.execute(ToolCall("submit", {"ids": ["pkg/api.py::get", item]}))
        assert obs.ok is False and "Nothing was submitted" in obs.text, item
    assert asked == []
    assert not [e for e in env.verifier.events if e["kind"] == "verdict"]


# --------------------------------------------------------------------------- real snapshots and manifests


def test_manifests_and_objectives_carry_no_answers(built_data: Path, hidden_valid) -> None:
    rows = (built_data / "manifests" / "reposcan.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(rows) == 36
    every_valid = set()
    for row in rows:
        spec = json.loads(row)
        every_valid |= hidden_valid(spec["task_id"])
        assert "valid" not in spec and "valid" not in spec["settings"]
        # the objective's format hint is the only '::' a row may hold
        assert "::" not in row.replace("path/to/file.py::Class.function", "")
        assert "hidden" not in row.lower()
    text = "\n".join(rows)
    assert len(every_valid) > 1000
    assert not [uid for uid in every_valid if uid in text]
    assert not [uid for uid in every_valid if uid.split("::")[1] in text and "." in uid.split("::")[1]]


def test_the_search_index_holds_only_snapshot_code(snapshot_root: Path) -> None:
    for repo in REPOS:
        tree = (snapshot_root / repo).resolve()
        search = search_for(snapshot_root / repo, 50, 10)
        assert len(search.units) > 500
        for unit in search.units:
            assert not unit.path.startswith(("data/hidden", "/", "..")) and "hidden/reposcan" not in unit.path
            assert (tree / unit.path).resolve().is_relative_to(tree)


def test_tokens_only_in_hidden_files_return_nothing(snapshot_root: Path, built_data: Path) -> None:
    hidden_tokens: set[str] = set()
    for path in sorted((built_data / "hidden" / "reposcan").glob("*.json")):
        hidden_tokens |= set(tokenize(path.read_text(encoding="utf-8")))
    indexes = [search_for(snapshot_root / repo, 50, 10) for repo in REPOS]
    only_hidden = {t for t in hidden_tokens if not any(t in s._vocab for s in indexes)}
    assert "reposcan" in only_hidden
    for search in indexes:
        for token in sorted(only_hidden):
            assert search.ranked(token) == ()
        assert search.page("reposcan hidden valid", 1).total == len(search.ranked("hidden valid"))


def test_schemas_and_observations_never_mention_hidden(real_env, real_tasks, hidden_valid) -> None:
    env = real_env("reposcan-requests-fixture-n010")
    assert "hidden" not in json.dumps(env.schemas()).lower()
    assert all("hidden" not in t.objective.lower() for t in real_tasks.values())
    valid = sorted(hidden_valid("reposcan-requests-fixture-n010"))
    script = [
        ("search", {"query": "test httpbin"}), ("search", {"query": "test httpbin", "page": 5}),
        ("search", {"query": "test httpbin", "page": 6}), ("search", {"query": "reposcan"}),
        ("submit", {"ids": valid[:3] + ["tests/test_requests.py::nope", valid[0]]}),
        ("submit", {"ids": ["../../data/x.py::f"]}), ("submit", {"ids": ["/etc/passwd.py::f"]}),
        ("status", {}), ("search", "{broken"), ("open", {"path": "../data"}), ("final", {"count": 3}),
        ("status", {}),
    ]
    for name, args in script:
        obs = env.execute(ToolCall(name, args))
        assert "hidden" not in obs.text.lower(), (name, args, obs.text)
    for event in env.verifier.events:
        if event["kind"] == "call" and event.get("error"):
            assert "hidden" not in event["error"].lower()
