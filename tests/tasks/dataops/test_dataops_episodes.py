"""Whole DataOps-lite episodes: SimLM under each controller, the perfect bound, determinism."""

from __future__ import annotations

import pytest

from pushbench.backends.native import run_native
from pushbench.controllers import make_controller
from pushbench.memory import make_memory
from pushbench.scoring import score_events
from pushbench.policies import make_policy

from dataops_kit import dataops_data, dataops_env, dataops_tasks  # noqa: F401


def episode(make_env, task_id: str, controller: str, model: str, seed: int = 7):
    env = make_env(task_id)
    run = run_native(env, make_policy(model), make_controller(controller), make_memory("full"), seed)
    row = score_events(env.verifier.events, env.task)
    return env, run, row


@pytest.mark.parametrize("controller", ["standard", "gated", "unitqgp"])
@pytest.mark.parametrize("task_id", ["dataops-n03-b2", "dataops-n10-b4", "dataops-n20-b6"])
def test_perfect_passes_every_unit_within_budget(dataops_env, controller: str, task_id: str) -> None:
    env, run, row = episode(dataops_env, task_id, controller, "sim/perfect")
    assert row["success"] and row["termination"] == "final" and row["reported_count"] == env.task.target
    assert row["steps"] == env.task.oracle_steps <= env.task.budget
    assert row["duplicate_submissions"] == row["rejected_submissions"] == row["invalid_actions"] == 0
    assert row["checker_runs"] == env.task.target and row["unchecked_submits"] == 0
    assert all(r["passed"] for r in row["unit_results"].values())
    assert run.llm_calls == row["steps"]  # one model turn per tool call


@pytest.mark.parametrize("controller", ["standard", "gated", "unitqgp"])
def test_weak_profile_episode_is_consistent_and_deterministic(dataops_env, controller: str) -> None:
    env, run, row = episode(dataops_env, "dataops-n10-b2", controller, "sim/mini", seed=3)
    _, _, again = episode(dataops_env, "dataops-n10-b2", controller, "sim/mini", seed=3)
    assert row == again
    assert row["valid_count"] == row["units_passed"] == env.verifier.valid_count
    assert sum(t["passed"] for t in row["unit_type_results"].values()) == row["units_passed"]
    assert row["steps"] <= env.task.budget
    failed = [e for e in env.verifier.events if e["kind"] == "call" and not e["ok"]]
    assert len(failed) == row["invalid_actions"]  # the only invalid actions: edits made from a stale page
    assert all(e["tool"] == "edit" and e["error"].endswith("Nothing changed.") for e in failed), failed
    if controller == "unitqgp":
        assert row["unchecked_submits"] == 0 and row["duplicate_submissions"] == 0
        assert all("[progress] verified accepted" in m["content"] for m in run.transcript
                   if m["role"] == "tool" and not m["content"].startswith(("[controller] final blocked", "final:")))
    if controller != "standard":
        assert not row["false_completion"]


def test_simlm_reads_only_what_it_inspected(dataops_env) -> None:
    """Competence comes from pages: without a page in the context SimLM inspects before answering."""
    env, run, _ = episode(dataops_env, "dataops-n03-b1", "standard", "sim/perfect")
    calls = [m["tool_calls"][0]["function"] for m in run.transcript if m["role"] == "assistant" and m.get("tool_calls")]
    names = [c["name"] for c in calls]
    assert names[0] == "list_units"
    for unit in env.records:
        touched = [c["name"] for c in calls if f'"unit": "{unit}"' in c["arguments"]]
        work = next(i for i, n in enumerate(touched) if n in ("answer", "edit"))
        assert "inspect" in touched[:work] and touched[work + 1:] == ["run_checker", "submit"]
