"""Stale inspection on SWE-lite (issue 19 item 3): an edit of its own that SimLM no longer recalls is
neither checked nor reverted, and its next try comes from code it read before that edit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pushbench.backends.native import EpisodeRun, step, system_prompt
from pushbench.controllers import make_controller
from pushbench.memory import make_memory
from pushbench.policies.base import tool_call_message
from pushbench.policies.sim import SimLM, get_profile
from pushbench.policies.sim import units as su
from pushbench.sandbox import jail_problem
from pushbench.tasks.swe.env import SweEnv
from pushbench.tasks.swe.runs import Workspace
from pushbench.tasks.swe.units import inject
from pushbench.verifier import Verifier

from agentkit import ScriptedPolicy
from swe_toy import CLAMP_FAULT, MATHX, toy_spec, write_toy

pytestmark = pytest.mark.skipif(jail_problem() is not None, reason=f"no bubblewrap jail here: {jail_problem()}")
PERFECT = get_profile("perfect")


@pytest.fixture
def drive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PUSHBENCH_SWE_TEST_CACHE", str(tmp_path / "cache"))
    spec = toy_spec(1, budget=50)
    ws = Workspace("toy", write_toy(tmp_path / "snaps"))
    inject(ws, [CLAMP_FAULT])
    env = SweEnv(spec, Verifier(spec.task_id, spec.target, lambda _: False, retry_rejected=True), ws,
                 {"U01": CLAMP_FAULT})
    controller, memory = make_controller("standard"), make_memory("full")
    memory.start(system_prompt(controller), spec.objective)
    run, tools = EpisodeRun(env), env.schemas()

    def do(name: str, args: dict[str, Any]) -> str:
        step(run, ScriptedPolicy([tool_call_message(name, args, f"c{len(run.transcript)}")]), controller, memory,
             tools, 0)
        return str(memory.render(10**9)[-1]["content"])

    def mind() -> tuple[str, dict[str, Any]]:
        turn = SimLM(PERFECT).act(memory.render(10**9), tools, 2)
        args = turn.call.arguments
        return turn.call.name, args if isinstance(args, dict) else json.loads(args or "{}")
    yield do, mind
    ws.close()


def test_a_forgotten_edit_is_not_checked_and_the_next_try_uses_the_code_read_before(drive, monkeypatch) -> None:
    do, mind = drive
    do("list_units", {})
    name, args = "run_tests", {"unit": "U01"}
    for _ in range(12):  # the perfect mind until its first edit
        do(name, args)
        name, args = mind()
        if name == "edit":
            break
    assert name == "edit" and args["unit"] == "U01"
    first = args
    assert do(name, args).startswith("edit: ")
    assert mind() == ("run_tests", {"unit": "U01"})  # it recalls the edit: it checks it

    original = su.UnitMind.act

    def forgetting(self: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        facts = self.reader.facts
        monkeypatch.setattr(su, "recalled_mask", lambda *a: facts.array("kind") != su.CHANGED)
        return original(self, messages, tools)
    monkeypatch.setattr(su.UnitMind, "act", forgetting)
    name, args = mind()
    assert name == "edit" and args != first  # no check: another try, from the lines it read before the edit
    read_before = MATHX.replace(CLAMP_FAULT.original, CLAMP_FAULT.broken)
    assert args["old"] in read_before and args["path"] == first["path"]
    result = do(name, args)  # applied on another line, it stacks a second change on the forgotten one
    if result.startswith("ERROR: edit "):  # its old text is gone: the failure makes the earlier read stale
        name, args = mind()
        assert name == "read_file" and args["path"] == first["path"]
