"""DataOps-lite tools: the per-episode copy, path isolation, bad inputs, and submit semantics."""

from __future__ import annotations

import os
from pathlib import Path

from pushbench.tools import ToolCall

from dataops_kit import call, dataops_data, dataops_env, dataops_tasks, do_action, reference_action  # noqa: F401


def _unit_of(env, kind: str) -> str:
    return next(u for u, r in env.records.items() if r.info.kind == kind)


def test_units_work_through_inspect_answer_check_submit(dataops_env) -> None:
    env = dataops_env("dataops-n05-b1")
    listing = call(env, "list_units")
    assert listing.ok and listing.text.startswith("backlog: 5 units")
    for unit in env.records:
        card = call(env, "inspect", unit=unit)
        assert card.ok and card.text.startswith(f"{unit} [") and "files:" in card.text
        action = reference_action(env, unit)
        assert do_action(env, unit, action).ok
        checked = call(env, "run_checker", unit=unit)
        assert checked.text.startswith(f"checker {unit}: PASS"), checked.text
        assert call(env, "submit", unit=unit).text == f"submit {unit}: accepted (checker passed)."
    assert env.verifier.valid_count == 5
    assert call(env, "submit", unit="U01").text.startswith("submit U01: duplicate")
    assert env.passed_units() == list(env.records) and env.checker_runs == 5


def test_a_rejected_unit_can_be_fixed_and_resubmitted(dataops_env) -> None:
    env = dataops_env("dataops-n03-b1")
    unit = _unit_of(env, "csv_field")
    assert call(env, "submit", unit=unit).text.startswith(f"submit {unit}: rejected")  # nothing answered yet
    call(env, "answer", unit=unit, value="not-a-number")
    assert "FAIL" in call(env, "run_checker", unit=unit).text
    assert env.records[unit].state == "attempted"
    do_action(env, unit, reference_action(env, unit))
    assert call(env, "submit", unit=unit).text.endswith("accepted (checker passed).")
    assert env.records[unit].recovered and env.recoveries == 1


def test_edits_happen_in_a_per_episode_copy_removed_at_the_end(dataops_env) -> None:
    first, second = dataops_env("dataops-n03-b1"), dataops_env("dataops-n03-b1")
    unit = _unit_of(first, "metadata_repair")
    action = reference_action(first, unit)
    assert do_action(first, unit, action).ok
    path = action[1]
    assert (first.unit_dir(unit) / path).read_text() != (second.unit_dir(unit) / path).read_text()
    workspace = first.workspace
    assert workspace.is_dir() and first.workspace != second.workspace
    assert call(first, "final", count=0).done
    assert not workspace.exists()


def test_paths_outside_the_copy_are_refused(dataops_env, tmp_path: Path) -> None:
    env = dataops_env("dataops-n03-b1")
    unit = _unit_of(env, "metadata_repair")
    secret = tmp_path / "secret.txt"
    secret.write_text("zebracorn\n", encoding="utf-8")
    os.symlink(secret, env.unit_dir(unit) / "linked.txt")
    os.symlink(tmp_path, env.unit_dir(unit) / "linkdir")
    other = next(u for u in env.records if u != unit)
    bad = ["../" + other + "/x", "/etc/passwd", str(secret), "linked.txt", "linkdir/secret.txt", "a\\b",
           "C:/x", "./PKG-INFO", "~/x", "src//x", "nope.txt"]
    for path in bad:
        for name, extra in (("inspect", {}), ("edit", {"old": "a", "new": "b"})):
            obs = call(env, name, unit=unit, path=path, **extra)
            assert not obs.ok and obs.text.startswith("ERROR:"), (name, path, obs.text)
            assert "zebracorn" not in obs.text
    assert not call(env, "edit", unit=unit, path="", old="a", new="b").ok
    assert secret.read_text() == "zebracorn\n"
    assert "linked.txt" not in env.files_of(unit)


def test_bad_inputs_are_invalid_actions_not_crashes(dataops_env) -> None:
    env = dataops_env("dataops-n03-b1")
    repair, data = _unit_of(env, "metadata_repair"), _unit_of(env, "csv_field")
    cases = [
        ("inspect", {"unit": "U99"}), ("inspect", {"unit": "../U01"}), ("inspect", {"unit": 3}),
        ("inspect", {"unit": data, "path": env.files_of(data)[0], "page": 999}),
        ("answer", {"unit": repair, "value": "x"}), ("answer", {"unit": data, "value": "a\x00b"}),
        ("edit", {"unit": data, "path": env.files_of(data)[0], "old": "1", "new": "2"}),
        ("edit", {"unit": repair, "path": "PKG-INFO", "old": "no such text", "new": "x"}),
        ("edit", {"unit": repair, "path": "PKG-INFO", "old": "Classifier", "new": "x"}),
        ("edit", {"unit": repair, "path": "PKG-INFO", "old": "Name", "new": "a\x07"}),
        ("run_checker", {}), ("submit", {"unit": ""}), ("nope", {}), ("final", {"count": -1}),
    ]
    for name, args in cases:
        obs = env.execute(ToolCall(name, args))
        assert not obs.ok and obs.text.startswith("ERROR:"), (name, args, obs.text)
    assert env.execute(ToolCall("inspect", "{not json")).text.startswith("ERROR: arguments are not valid JSON")
    calls = [e for e in env.verifier.events if e["kind"] == "call"]
    assert len(calls) == len(cases) + 1 and not any(e["ok"] for e in calls)
    assert env.verifier.valid_count == 0 and not env.done


def test_a_multiline_edit_inserts_a_missing_field(dataops_env) -> None:
    env = dataops_env("dataops-n03-b1")
    unit = _unit_of(env, "metadata_repair")
    obs = call(env, "edit", unit=unit, path="PKG-INFO", old="Metadata-Version: 2.1",
               new="Metadata-Version: 2.1\nX-Test: 1")
    assert obs.ok
    assert "X-Test: 1" in (env.unit_dir(unit) / "PKG-INFO").read_text()
    assert env.records[unit].changed_since_check


def test_the_budget_ends_the_episode(dataops_env) -> None:
    env = dataops_env("dataops-n03-b1")
    for _ in range(env.task.budget):
        obs = call(env, "status")
    assert obs.done and env.termination == "budget"
    assert call(env, "status").text.startswith("ERROR: the episode has ended")


def test_an_edit_with_a_lone_surrogate_changes_nothing(dataops_env) -> None:
    env = dataops_env("dataops-n03-b1")
    unit = _unit_of(env, "metadata_repair")
    target = env.unit_dir(unit) / "PKG-INFO"
    before = target.read_bytes()
    obs = env.execute(ToolCall("edit", '{"unit": "%s", "path": "PKG-INFO", "old": "Metadata-Version: 2.1", '
                                       '"new": "\\ud800"}' % unit))  # valid JSON, no UTF-8 encoding
    assert not obs.ok and obs.text.startswith("ERROR:")
    assert target.read_bytes() == before  # untouched
    assert not [p for p in env.unit_dir(unit).rglob("*") if p.name.endswith(".tmp")]  # no temporary file left
    assert not env.records[unit].changed_since_check
