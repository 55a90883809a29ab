"""The work-unit failure mechanisms of PushBench §8, each from what SimLM recalls (issue 19 items 3, 5).

Each context is a real DataOps-lite episode driven by a script (messages in); what the mind recalls
is fixed by hand (``recall_all_but``: everything but the named facts, as a recall mask would), and
the test reads the mind's next action (action out): stale inspection, the no-submit loop (a pass
taken for done, a forgotten pass checked again), the missing checker call and its instruction, and
the loop on a blocked final it believes earned."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, Callable

import numpy as np
import pytest

from pushbench import guidance as g
from pushbench.backends.native import EpisodeRun, step, system_prompt
from pushbench.controllers import make_controller
from pushbench.memory import make_memory
from pushbench.policies.base import tool_call_message
from pushbench.policies.sim import SimLM, get_profile
from pushbench.policies.sim import units as su
from pushbench.tasks.dataops.mind import DataOpsMind

from agentkit import ScriptedPolicy
from dataops_kit import dataops_data, dataops_env, dataops_tasks, reference_action  # noqa: F401

PERFECT = get_profile("perfect")
RULE_KEY = "unit-verified"


class Drive:
    """A scripted episode under ``controller``; ``messages`` is the context the policy sees next."""

    def __init__(self, env: Any, controller: str = "standard"):
        self.env, self.controller, self.memory = env, make_controller(controller), make_memory("full")
        self.memory.start(system_prompt(self.controller), env.task.objective)
        self.run, self.tools, self.n = EpisodeRun(env), env.schemas(), 0

    def do(self, name: str, args: dict[str, Any]) -> str:
        self.n += 1
        step(self.run, ScriptedPolicy([tool_call_message(name, args, f"c{self.n}")]), self.controller, self.memory,
             self.tools, 0)
        return str(self.messages[-1]["content"])

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.memory.render(10**9)


def change_call(unit: str, action: tuple[str, ...]) -> tuple[str, dict[str, Any]]:
    if action[0] == "answer":
        return "answer", {"unit": unit, "value": action[1]}
    return "edit", {"unit": unit, "path": action[1], "old": action[2], "new": action[3]}


def inspected(d: Drive, unit: str) -> None:
    """Every page of every file of ``unit``, read in order (what it then recalls is the test's choice)."""
    from pushbench.tasks.dataops import units as du

    env = d.env
    for rel in env.files_of(unit):
        n = len((env.unit_dir(unit) / rel).read_text(encoding="utf-8").splitlines())
        pages = du.page_count(n - 1, env.page_rows) if rel.endswith(".csv") else du.page_count(n, env.page_lines)
        for page in range(1, pages + 1):
            d.do("inspect", {"unit": unit, "path": rel, "page": page})


def act(profile: Any, d: Drive, seed: int = 5) -> tuple[str, dict[str, Any]]:
    turn = SimLM(profile).act(d.messages, d.tools, seed)
    assert turn.call is not None
    args = turn.call.arguments
    return turn.call.name, args if isinstance(args, dict) else json.loads(args or "{}")


def recall_all_but(monkeypatch: pytest.MonkeyPatch, forgotten: Callable[[Any], np.ndarray]) -> None:
    """The work-unit mind recalls every fact except those ``forgotten(facts)`` marks."""
    def mask(profile: Any, offsets: np.ndarray, total: int, seed: int, step: int) -> np.ndarray:
        facts = current["facts"]
        return ~forgotten(facts)[: len(offsets)]
    current: dict[str, Any] = {}
    original = su.UnitMind.act

    def act_with(self: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        current["facts"] = self.reader.facts
        return original(self, messages, tools)
    monkeypatch.setattr(su, "recalled_mask", mask)
    monkeypatch.setattr(su.UnitMind, "act", act_with)


def of_kind(*kinds: int) -> Callable[[Any], np.ndarray]:
    return lambda facts: np.isin(facts.array("kind"), kinds)


def metadata_edit_unit(env: Any) -> tuple[str, tuple[str, ...]]:
    """A unit whose fix replaces a wrong value (the page read before the edit shows the old value)."""
    from pushbench.tasks.dataops import units as du

    for unit in env.records:
        action = reference_action(env, unit)
        if action[0] == "edit" and du.parse_title(env.records[unit].info.title).form == "wrong":
            return unit, action
    raise AssertionError("no wrong-value metadata unit in this backlog")


def answer_unit(env: Any) -> tuple[str, tuple[str, ...]]:
    unit = next(u for u in env.records if reference_action(env, u)[0] == "answer")
    return unit, reference_action(env, unit)


def test_stale_inspection_acts_on_the_page_read_before_its_own_edit(dataops_env, monkeypatch) -> None:
    env = dataops_env("dataops-n20-b6")
    unit, action = metadata_edit_unit(env)
    d = Drive(env)
    d.do("list_units", {})
    inspected(d, unit)
    name, args = change_call(unit, action)
    d.do(name, args)
    d.do("run_checker", {"unit": unit})
    fixed_view = act(PERFECT, d)
    assert fixed_view == ("submit", {"unit": unit})  # it recalls the edit and the pass: it submits
    # forgetting its own edit and the check after it, the page it read before is all it has:
    recall_all_but(monkeypatch, of_kind(su.CHANGED, su.CHECK_PASS))
    assert act(PERFECT, d) == (name, args)  # the same edit, from the stale page
    result = d.do(name, args)
    assert result.startswith("ERROR: edit ")  # the old text is no longer in the file
    name2, args2 = act(PERFECT, d)  # the recalled failure makes every page before it stale: read again
    assert name2 == "inspect" and args2["unit"] == unit and args2.get("path", action[1]) == action[1]


def test_a_pass_taken_for_done_is_never_submitted_unless_the_rule_is_recalled(dataops_env, monkeypatch) -> None:
    env = dataops_env("dataops-n03-b1")
    unit, action = answer_unit(env)
    d = Drive(env)
    d.do("list_units", {})
    inspected(d, unit)
    d.do(*change_call(unit, action))
    assert d.do("run_checker", {"unit": unit}).startswith(f"checker {unit}: PASS")
    takes_pass = replace(PERFECT, pass_as_done=1.0)
    assert act(takes_pass, d) == ("submit", {"unit": unit})  # the objective's rule is recalled: it submits
    is_rule = lambda facts: (facts.array("kind") == su.RULE)  # noqa: E731
    recall_all_but(monkeypatch, is_rule)
    name, args = act(takes_pass, d)  # the rule forgotten: the pass is "done", it moves on (no submit)
    assert name != "submit" and args.get("unit") != unit
    assert act(PERFECT, d) == ("submit", {"unit": unit})  # a profile that never takes a pass for done


def test_a_forgotten_pass_is_checked_again_instead_of_submitted(dataops_env, monkeypatch) -> None:
    env = dataops_env("dataops-n03-b1")
    unit, action = answer_unit(env)
    d = Drive(env)
    d.do("list_units", {})
    inspected(d, unit)
    d.do(*change_call(unit, action))
    d.do("run_checker", {"unit": unit})
    recall_all_but(monkeypatch, of_kind(su.CHECK_PASS))
    assert act(PERFECT, d) == ("run_checker", {"unit": unit})  # it recalls the answer, not the pass


def test_the_checker_is_skipped_only_without_the_rule_in_mind(dataops_env, monkeypatch) -> None:
    env = dataops_env("dataops-n03-b1")
    unit, action = answer_unit(env)
    d = Drive(env)
    d.do("list_units", {})
    inspected(d, unit)
    d.do(*change_call(unit, action))
    skipper = replace(PERFECT, skip_checker=1.0)
    assert act(skipper, d) == ("run_checker", {"unit": unit})  # recalled (and followed) rule: check first
    deaf = replace(skipper, follow_guidance=0.0)
    assert act(deaf, d) == ("submit", {"unit": unit})  # the rule recalled but not followed
    recall_all_but(monkeypatch, lambda facts: facts.array("kind") == su.RULE)
    assert act(skipper, d) == ("submit", {"unit": unit})  # the rule forgotten: a missing verifier call


def blocked_context(env: Any) -> Drive:
    """Under gated: one unit done and submitted, the rest forgotten later; then a final is blocked."""
    d = Drive(env, "gated")
    d.do("list_units", {})
    unit, action = answer_unit(env)
    inspected(d, unit)
    d.do(*change_call(unit, action))
    d.do("run_checker", {"unit": unit})
    d.do("submit", {"unit": unit})
    assert d.do("final", {"count": env.task.target}).startswith(g.BLOCKED_MARK)
    return d


def test_a_blocked_final_it_believes_earned_is_repeated_or_checked(dataops_env) -> None:
    env = dataops_env("dataops-n03-b1")
    d = blocked_context(env)
    stubborn = replace(PERFECT, follow_guidance=0.0, check_status=0.0)  # it does not take the notice's count
    assert act(stubborn, d) == ("final", {"count": 1})  # the loop: final again
    assert act(replace(stubborn, check_status=1.0), d) == ("status", {})  # or a status check, not work


def test_a_followed_blocked_notice_sets_its_count_to_the_verified_one(dataops_env) -> None:
    env = dataops_env("dataops-n03-b1")
    d = blocked_context(env)
    mind = DataOpsMind(PERFECT, 5)
    mind.reader.update(d.messages, d.tools)
    ctx = su.Recall(mind, np.ones(len(mind.reader.facts), dtype=bool), 99)
    assert ctx.believed_count() == env.verifier.valid_count == 1
    name, args = act(PERFECT, d)
    assert name != "final" and args.get("unit") not in (None, "U01")  # it resumes work on an open unit
