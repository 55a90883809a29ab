"""The work-unit minds read UnitQGP's instructions (pushbench.guidance) and follow them per profile.

Each context is built by a scripted episode under UnitQGP (the controller writes the guidance),
then edited by hand where a test needs the mind to have forgotten something (a checker result)."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from pushbench import guidance as g
from pushbench.backends.native import EpisodeRun, step, system_prompt
from pushbench.controllers import make_controller
from pushbench.memory import make_memory
from pushbench.policies.base import tool_call_message
from pushbench.policies.sim import SimLM, get_profile
from pushbench.policies.sim.units import PROGRESS
from pushbench.tasks.dataops.mind import DataOpsMind

from agentkit import ScriptedPolicy
from dataops_kit import dataops_data, dataops_env, dataops_tasks, reference_action  # noqa: F401

PERFECT = get_profile("perfect")
DEAF = replace(PERFECT, follow_guidance=0.0)  # the same mind, never following a controller line


class Drive:
    """A scripted episode under UnitQGP: ``do`` a call; ``messages`` is the context the policy sees next."""

    def __init__(self, env: Any):
        self.env, self.controller, self.memory = env, make_controller("unitqgp"), make_memory("full")
        self.memory.start(system_prompt(self.controller), env.task.objective)
        self.run, self.tools, self.n = EpisodeRun(env), env.schemas(), 0

    def do(self, name: str, args: dict[str, Any]) -> None:
        self.n += 1
        step(self.run, ScriptedPolicy([tool_call_message(name, args, f"c{self.n}")]), self.controller, self.memory,
             self.tools, 0)

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.memory.render(10**9)

    def look_at(self, unit: str) -> None:
        """The looks the perfect mind takes at ``unit`` until it would answer or edit it."""
        for _ in range(20):
            name, args = act(PERFECT, self.messages, self.tools)
            if name != "inspect":
                return
            assert args["unit"] == unit
            self.do(name, args)
        raise AssertionError("no answer after 20 looks")


def drive(env: Any, calls: list[tuple[str, dict[str, Any]]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Run ``calls`` under UnitQGP (``("look", {"unit": U})``: the looks it needs at U)."""
    d = Drive(env)
    for name, args in calls:
        d.look_at(args["unit"]) if name == "look" else d.do(name, args)
    return d.messages, d.tools


def forget(messages: list[dict[str, Any]], prefix: str) -> list[dict[str, Any]]:
    """The context with every line starting with ``prefix`` gone (as if not recalled)."""
    out = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, str) and m["role"] == "tool":
            m = {**m, "content": "\n".join(line for line in content.splitlines() if not line.startswith(prefix))}
        out.append(m)
    return out


def act(profile: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    turn = SimLM(profile).act(messages, tools, 5)
    assert turn.call is not None
    args = turn.call.arguments
    return turn.call.name, args if isinstance(args, dict) else json.loads(args or "{}")


def first_answerable(env: Any) -> tuple[str, tuple[str, ...]]:
    unit = next(u for u in env.records if reference_action(env, u)[0] == "answer")
    return unit, reference_action(env, unit)


def test_profiles_follow_guidance_values() -> None:
    assert PERFECT.follow_guidance == 1.0
    assert [get_profile(p).follow_guidance for p in ("mini", "base", "pro")] == [0.7, 0.85, 0.95]


def test_failed_unchanged_makes_it_fix_the_unit(dataops_env) -> None:
    env = dataops_env("dataops-n03-b1")
    unit, _ = first_answerable(env)
    messages, tools = drive(env, [("list_units", {}), ("look", {"unit": unit}),
                                  ("answer", {"unit": unit, "value": "not-the-answer"}),
                                  ("run_checker", {"unit": unit}), ("submit", {"unit": unit})])
    assert messages[-1]["content"].splitlines()[0] == g.failed_unchanged(unit, "run_checker")
    forgot = forget(messages, f"checker {unit}:")  # it no longer recalls the FAIL
    assert act(DEAF, forgot, tools)[1].get("unit") != unit  # its own logic: submitted, so done; move on
    name, args = act(PERFECT, forgot, tools)
    assert name in ("answer", "edit") and args["unit"] == unit  # a fix, from the pages it read


def test_all_accepted_makes_it_call_final_with_the_verified_count(dataops_env) -> None:
    env = dataops_env("dataops-n03-b1")
    calls: list[tuple[str, dict[str, Any]]] = [("list_units", {})]
    for unit in env.records:
        action = reference_action(env, unit)
        calls.append(("inspect", {"unit": unit}))
        if action[0] == "answer":
            calls.append(("answer", {"unit": unit, "value": action[1]}))
        else:
            calls.append(("edit", {"unit": unit, "path": action[1], "old": action[2], "new": action[3]}))
        calls += [("run_checker", {"unit": unit}), ("submit", {"unit": unit})]
    calls.append(("inspect", {"unit": next(iter(env.records))}))  # refused: accepted, and nothing is left
    messages, tools = drive(env, calls)
    assert g.ALL_ACCEPTED in messages[-1]["content"].splitlines()
    verified = env.verifier.valid_count
    assert verified == len(env.records)
    assert act(PERFECT, messages, tools) == ("final", {"count": verified})


def test_a_repeat_refusal_makes_it_pick_another_call(dataops_env) -> None:
    env = dataops_env("dataops-n03-b1")
    unit, _ = first_answerable(env)
    messages, tools = drive(env, [("list_units", {}), ("look", {"unit": unit}),
                                  ("answer", {"unit": unit, "value": "not-the-answer"}),
                                  ("run_checker", {"unit": unit}), ("run_checker", {"unit": unit})])
    assert messages[-1]["content"].splitlines()[0] == g.REPEATED
    forgot = forget(messages, f"checker {unit}:")  # it forgot the result, so it would run the checker again
    assert act(DEAF, forgot, tools) == ("run_checker", {"unit": unit})
    name, args = act(PERFECT, forgot, tools)
    assert (name, args) != ("run_checker", {"unit": unit})
    assert args.get("unit") not in (None, unit)  # the step of another open unit


def test_already_accepted_is_recorded_as_accepted(dataops_env) -> None:
    env = dataops_env("dataops-n03-b1")
    unit = next(iter(env.records))
    action = reference_action(env, unit)
    change = (("answer", {"unit": unit, "value": action[1]}) if action[0] == "answer" else
              ("edit", {"unit": unit, "path": action[1], "old": action[2], "new": action[3]}))
    messages, tools = drive(env, [("list_units", {}), ("inspect", {"unit": unit}), change,
                                  ("run_checker", {"unit": unit}), ("submit", {"unit": unit}),
                                  ("inspect", {"unit": unit})])
    assert messages[-1]["content"].splitlines()[0] == g.already_accepted(unit)
    # it forgot the verdict and every progress block: only the refusal says the unit is accepted
    forgot = forget(forget(messages, "submit "), "[progress]")
    for profile, recorded in ((PERFECT, True), (DEAF, False)):
        mind = DataOpsMind(profile, 5)
        mind.reader.update(forgot, tools)
        facts = mind.reader.facts
        key = facts.keys[unit]
        got = bool(((facts.array("kind") == PROGRESS) & (facts.array("key") == key)).any())
        assert got == recorded  # a passed unit, as the progress block's passed field would record it
    name, args = act(PERFECT, forgot, tools)
    assert args.get("unit") not in (None, unit)
