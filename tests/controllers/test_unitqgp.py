"""UnitQGP mechanics on a real DataOps-lite backlog, and the work-unit metrics."""

from __future__ import annotations

import pytest

from pushbench.backends.native import step
from pushbench.controllers import make_controller
from pushbench.controllers.base import Intercept
from pushbench.scoring import score_events
from pushbench.scoring.units import unit_metrics
from pushbench.tools import ToolCall

from agentkit import make_env
from dataops_kit import dataops_data, dataops_env, dataops_tasks, reference_action  # noqa: F401


def run(env, controller, name: str, **args):
    """One call through the controller, as the native backend does it."""
    call = ToolCall(name, args)
    decision = controller.before(call, env)
    if isinstance(decision, Intercept):
        obs, executed = env.refuse(call, decision.text, controller.name), call
    else:
        obs, executed = env.execute(decision), decision
    return controller.after(executed, obs, env), executed


def fix(env, controller, unit: str):
    action = reference_action(env, unit)
    if action[0] == "answer":
        return run(env, controller, "answer", unit=unit, value=action[1])
    return run(env, controller, "edit", unit=unit, path=action[1], old=action[2], new=action[3])


def test_progress_block_in_every_observation(dataops_env) -> None:
    env, ctl = dataops_env("dataops-n03-b1"), make_controller("unitqgp")
    obs, _ = run(env, ctl, "list_units")
    assert obs.text.splitlines()[-1].startswith("[progress] verified accepted 0/3 · passed: none · attempted: none "
                                                "· pending: U01,U02,U03 · next: U01")
    obs, _ = run(env, ctl, "inspect", unit="U02")
    assert "attempted: U02 (checker not run)" in obs.text and "next: U02" in obs.text
    obs, _ = run(env, ctl, "inspect", unit="U99")
    assert obs.text.startswith("ERROR:") and "[progress]" in obs.text


def test_submit_after_a_change_runs_the_checker_first(dataops_env) -> None:
    env, ctl = dataops_env("dataops-n03-b1"), make_controller("unitqgp")
    obs, _ = fix(env, ctl, "U01")
    assert "[controller] next: run_checker(U01) before submitting." in obs.text
    obs, executed = run(env, ctl, "submit", unit="U01")
    assert executed.name == "run_checker" and obs.text.startswith("checker U01: PASS")
    assert "ran run_checker(U01) instead of submitting" in obs.text
    assert "submit(U01) now" in obs.text and env.verifier.valid_count == 0
    obs, executed = run(env, ctl, "submit", unit="U01")
    assert executed.name == "submit" and "accepted" in obs.text and env.verifier.valid_count == 1


def test_a_failed_unit_is_not_resubmitted_unchanged_and_recovery_is_recorded(dataops_env) -> None:
    env, ctl = dataops_env("dataops-n03-b1"), make_controller("unitqgp")
    unit = next(u for u, r in env.records.items() if r.info.kind == "csv_field")
    run(env, ctl, "answer", unit=unit, value="-12345")
    obs, _ = run(env, ctl, "run_checker", unit=unit)
    assert "FAIL" in obs.text and f"{unit} (checker FAIL)" in obs.text
    obs, _ = run(env, ctl, "submit", unit=unit)
    assert "last checker run failed and nothing changed" in obs.text
    assert not [e for e in env.verifier.events if e["kind"] == "verdict"]
    fix(env, ctl, unit)
    run(env, ctl, "run_checker", unit=unit)
    run(env, ctl, "submit", unit=unit)
    assert ctl.recoveries == 1 and env.recoveries == 0  # a checker failure, not a rejected submit
    metrics = score_events(env.verifier.events, env.task)
    assert metrics["verifier_recoveries"] == 1 and metrics["checker_runs"] == 2
    assert metrics["unit_results"][unit] == {"kind": "csv_field", "passed": True, "submits": 1,
                                             "checker_runs": 2, "recovered": True}


def test_a_failure_before_any_attempt_is_not_a_recovery(dataops_env) -> None:
    """Running the checker first only reproduces the issue; fixing it afterwards is not a recovery."""
    env, ctl = dataops_env("dataops-n03-b1"), make_controller("unitqgp")
    obs, _ = run(env, ctl, "run_checker", unit="U01")
    assert "FAIL" in obs.text
    fix(env, ctl, "U01")
    run(env, ctl, "run_checker", unit="U01")
    obs, _ = run(env, ctl, "submit", unit="U01")
    assert "accepted" in obs.text and ctl.recoveries == 0
    metrics = score_events(env.verifier.events, env.task)
    assert metrics["verifier_recoveries"] == 0 and metrics["checker_runs"] == 2
    assert metrics["unit_results"]["U01"]["passed"] and not metrics["unit_results"]["U01"]["recovered"]


def test_actions_on_passed_units_and_repeats_are_redirected(dataops_env) -> None:
    env, ctl = dataops_env("dataops-n03-b1"), make_controller("unitqgp")
    fix(env, ctl, "U01")
    run(env, ctl, "run_checker", unit="U01")
    run(env, ctl, "submit", unit="U01")
    for name in ("submit", "inspect", "run_checker"):
        obs, _ = run(env, ctl, name, unit="U01")
        assert obs.text.startswith("[controller] U01 is already accepted")
        assert "[controller] Next: U02 [" in obs.text
    run(env, ctl, "inspect", unit="U02")
    obs, _ = run(env, ctl, "inspect", unit="U02")
    assert obs.text.startswith("[controller] this repeats your previous call exactly")
    assert env.verifier.valid_count == 1 and sum(1 for e in env.verifier.events if e["kind"] == "verdict") == 1


def test_a_stale_loop_is_redirected_and_a_checked_unit_submitted(dataops_env) -> None:
    env, ctl = dataops_env("dataops-n10-b1"), make_controller("unitqgp")
    fix(env, ctl, "U02")
    run(env, ctl, "run_checker", unit="U02")
    for page in range(1, ctl.stale_limit + 1):  # looking around without doing any unit work
        run(env, ctl, "status") if page % 2 else run(env, ctl, "list_units")
    obs, executed = run(env, ctl, "inspect", unit="U05")
    assert executed.name == "submit" and executed.arguments == {"unit": "U02"}
    assert "no unit was accepted in the last" in obs.text and env.verifier.valid_count == 1
    for _ in range(ctl.stale_limit):
        run(env, ctl, "status") if _ % 2 else run(env, ctl, "list_units")
    obs, executed = run(env, ctl, "inspect", unit="U05")
    assert obs.text.startswith("[controller] no unit was accepted") and "[controller] Next: " in obs.text


def test_final_and_stopping_are_gated_with_the_next_unit(dataops_env) -> None:
    env, ctl = dataops_env("dataops-n03-b1"), make_controller("unitqgp")
    obs, _ = run(env, ctl, "final", count=3)
    assert obs.text.startswith("[controller] final blocked") and "[controller] Next: U01" in obs.text
    assert not env.done
    block = ctl.on_stop(env)
    assert block is not None and "Next: U01" in block.text


def test_standard_and_gated_leave_submits_alone(dataops_env) -> None:
    for name in ("standard", "gated"):
        env, ctl = dataops_env("dataops-n03-b1"), make_controller(name)
        fix(env, ctl, "U01")
        obs, executed = run(env, ctl, "submit", unit="U01")
        assert executed.name == "submit" and "[progress]" not in obs.text
        metrics = score_events(env.verifier.events, env.task)
        assert metrics["unchecked_submits"] == 1 and metrics["checker_runs"] == 0


def test_unit_metrics_from_a_hand_built_log() -> None:
    units = [{"id": "U01", "kind": "csv_field"}, {"id": "U02", "kind": "consistency"}]
    events = [
        {"kind": "call", "tool": "answer", "ok": True, "info": {"unit": "U01", "kind": "csv_field"}},
        {"kind": "verdict", "item": "U01", "verdict": "rejected"},
        {"kind": "call", "tool": "submit", "ok": True, "info": {"unit": "U01", "verdict": "rejected"}},
        {"kind": "call", "tool": "answer", "ok": True, "info": {"unit": "U01"}},
        {"kind": "call", "tool": "run_checker", "ok": True, "info": {"unit": "U01", "checker": True}},
        {"kind": "verdict", "item": "U01", "verdict": "accepted"},
        {"kind": "call", "tool": "submit", "ok": True, "info": {"unit": "U01", "verdict": "accepted"}},
        {"kind": "call", "tool": "status", "ok": True},
        {"kind": "end", "reason": "final", "reported": 2},
    ]
    m = unit_metrics(events, units, change_tools=("answer", "edit"))
    assert m["units_passed"] == 1 and m["unit_success_rate"] == 0.5 and m["verifier_recoveries"] == 1
    assert m["checker_runs"] == 1 and m["unchecked_submits"] == 1
    assert m["unit_type_results"] == {"consistency": {"units": 1, "passed": 0}, "csv_field": {"units": 1, "passed": 1}}


def test_registered_with_the_backend_loop(dataops_env) -> None:
    """The controller works inside the native step (the system note reaches the model)."""
    from pushbench.backends.native import system_prompt

    assert "backlog controller" in system_prompt(make_controller("unitqgp"))
    assert callable(step)


def test_unitqgp_on_an_item_set_family_is_a_clear_error() -> None:
    env = make_env("reposcan-requests-fixture-n010")
    with pytest.raises(TypeError, match="needs a work-unit family"):
        make_controller("unitqgp").before(ToolCall("status", {}), env)
