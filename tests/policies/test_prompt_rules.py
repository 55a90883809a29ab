"""Instructions in the prompt are guidance (issue 19 item 5): the black-box checklist's rules change
what SimLM does, with the profile's follow probability and only while it recalls them where they sit."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from pushbench import guidance as g
from pushbench.backends.native import run_native
from pushbench.controllers import make_controller
from pushbench.harness.prompts import checklist, render_prompt
from pushbench.memory import make_memory
from pushbench.policies.sim import SimLM, get_profile
from pushbench.tasks.reposcan import mind as rm

from agentkit import make_env, task

# the perfect reader and recall, with no habit of checking status before final of its own
CAREFREE = replace(get_profile("perfect"), check_status=0.0)


def episode(variant: str, profile: Any = CAREFREE) -> tuple[Any, Any]:
    spec = task()
    env = make_env(objective=render_prompt(spec, variant))
    run = run_native(env, SimLM(profile), make_controller("standard"), make_memory("full"), 3)
    return env, run


def calls(run: Any) -> list[tuple[str, Any]]:
    return [(m["tool_calls"][0]["function"]["name"], m.get("content"))
            for m in run.transcript if m.get("role") == "assistant" and m.get("tool_calls")]


def test_the_checklist_states_the_rules_simlm_reads() -> None:
    assert g.prompt_rules(checklist(50)) == ["submitted-list", "status-final"]
    assert g.prompt_rules(render_prompt(task(), "default")) == []


def test_a_followed_checklist_checks_status_before_final_and_writes_the_submitted_list() -> None:
    env_default, default = episode("default")
    env_check, checked = episode("checklist")
    assert [c for c, _ in calls(default)][-1] == "final" and "status" not in [c for c, _ in calls(default)]
    names = [c for c, _ in calls(checked)]
    assert names[-2:] == ["status", "final"]  # status() before final, as rules 4/6 say
    lists = [content for name, content in calls(checked) if name == "submit"]
    assert lists and all(content.startswith("submitted: ") for content in lists)
    assert all(content is None for name, content in calls(default) if name == "submit")
    last = lists[-1][len("submitted: "):].split(", ")
    assert len(last) == len(set(last)) >= env_check.verifier.valid_count  # every id it submitted, once
    assert env_check.verifier.valid_count == env_default.verifier.valid_count  # same work, better bookkeeping


def test_a_profile_that_does_not_follow_instructions_ignores_the_checklist() -> None:
    deaf = replace(CAREFREE, follow_guidance=0.0)
    _, default = episode("default", deaf)
    _, checked = episode("checklist", deaf)
    assert calls(checked) == calls(default)


def test_a_rule_it_does_not_recall_is_not_followed(monkeypatch: pytest.MonkeyPatch) -> None:
    original = rm.recalled_mask

    def forget_rules(profile: Any, offsets: np.ndarray, total: int, seed: int, step: int) -> np.ndarray:
        mask = original(profile, offsets, total, seed, step)
        kinds = current["mind"].reader.facts.array("kind")[: len(offsets)]
        return mask & (kinds != rm.RULE)
    current: dict[str, Any] = {}
    act = rm.RepoScanMind.act

    def act_with(self: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        current["mind"] = self
        return act(self, messages, tools)
    monkeypatch.setattr(rm, "recalled_mask", forget_rules)
    monkeypatch.setattr(rm.RepoScanMind, "act", act_with)
    _, default = episode("default")
    _, checked = episode("checklist")
    assert [c for c, _ in calls(checked)] == [c for c, _ in calls(default)]
