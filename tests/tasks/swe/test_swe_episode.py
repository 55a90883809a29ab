"""Whole SWE-lite episodes: SimLM on a real backlog, real sandboxed test runs, every controller."""

from __future__ import annotations

import builtins
import io
from pathlib import Path

import pytest

from pushbench.backends.native import run_native
from pushbench.controllers import make_controller
from pushbench.memory import make_memory
from pushbench.scoring import score_events
from pushbench.policies.sim import SimLM
from pushbench.tasks import get_family, load_tasks, manifest_path

from swe_toy import released

TASK = "swe-requests-n2-a"


@pytest.fixture
def swe_task(snapshot_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    if not manifest_path("swe").is_file():
        pytest.skip("no swe manifest; run `pushbench manifests build --family swe`")
    monkeypatch.setenv("PUSHBENCH_SWE_TEST_CACHE", str(tmp_path / "cache"))  # real runs, shared in the test
    return {t.task_id: t for t in load_tasks("swe")}[TASK]


class NoFiles:
    """Fails the test if the policy opens any file while deciding (SimLM reads messages only)."""

    def __init__(self, policy: SimLM):
        self.policy, self.name, self.context_window = policy, policy.name, policy.context_window

    def act(self, messages, tools, seed):
        real_open, real_io_open = builtins.open, io.open

        def refuse(*args, **kwargs):
            raise AssertionError(f"SimLM opened a file: {args[:1]}")
        builtins.open = io.open = refuse
        try:
            return self.policy.act(messages, tools, seed)
        finally:
            builtins.open, io.open = real_open, real_io_open


@pytest.mark.parametrize("controller", ["unitqgp", "standard", "gated"])
def test_the_perfect_profile_repairs_a_backlog_within_budget(swe_task, controller: str) -> None:
    env = get_family("swe").environment(swe_task)
    base = env.workspace.base
    run_native(env, NoFiles(SimLM("perfect")), make_controller(controller), make_memory("full"), seed=7)
    metrics = score_events(env.verifier.events, swe_task)
    assert metrics["success"] and metrics["termination"] == "final"
    assert metrics["steps"] <= swe_task.oracle_steps + 2 * swe_task.target  # UnitQGP may add a check per unit
    assert metrics["duplicate_submissions"] == 0 and metrics["invalid_actions"] == 0
    assert released(env.workspace) and env.workspace.base == base  # nothing of the episode is left on disk


def test_a_weak_profile_runs_to_an_end_without_errors(swe_task) -> None:
    env = get_family("swe").environment(swe_task)
    run = run_native(env, NoFiles(SimLM("mini")), make_controller("unitqgp"), make_memory("full"), seed=3)
    metrics = score_events(env.verifier.events, swe_task)
    assert env.done and metrics["steps"] <= swe_task.budget and run.llm_calls >= metrics["steps"]
    tools = {e["tool"] for e in env.verifier.events if e["kind"] == "call"}
    assert {"run_tests", "search_files", "read_file", "edit"} <= tools
    assert released(env.workspace)
