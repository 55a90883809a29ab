"""SimLM's memory skills on a work-unit family (issue 19 item 4): under ``memgpt`` on DataOps-lite it
keeps a progress block of accepted and pending units, archives accepted units, searches the archive
before a submit, and reads its notes back."""

from __future__ import annotations

import json
from typing import Any

from pushbench import guidance as g
from pushbench.backends.native import run_native, system_prompt
from pushbench.controllers import make_controller
from pushbench.memory import make_memory
from pushbench.memory.memgpt import TOOLS as MEMGPT_TOOLS
from pushbench.policies.sim import SimLM, get_profile

from dataops_kit import dataops_data, dataops_env, dataops_tasks  # noqa: F401


def memory_calls(run: Any) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for m in run.transcript:
        for call in m.get("tool_calls") or []:
            fn = call["function"]
            if fn["name"] in {"core_memory_append", "core_memory_replace", "archival_memory_insert",
                              "archival_memory_search"}:
                out.append((fn["name"], json.loads(fn["arguments"])))
    return out


def test_a_memgpt_dataops_episode_keeps_unit_notes(dataops_env) -> None:
    def episode() -> tuple[Any, Any]:
        env = dataops_env("dataops-n05-b1")
        run = run_native(env, SimLM("sim/base"), make_controller("standard"), make_memory("memgpt"), 4)
        return env, run

    env, run = episode()
    used = memory_calls(run)
    names = {name for name, _ in used}
    assert {"archival_memory_insert", "archival_memory_search"} <= names and names & {"core_memory_append",
                                                                                       "core_memory_replace"}
    accepted = {e["item"] for e in env.verifier.events if e.get("verdict") == "accepted"}
    archived = {args["content"] for name, args in used if name == "archival_memory_insert"}
    assert archived and archived <= {g.submitted_note([u]) for u in accepted}  # only accepted units, by id
    notes = [args.get("new_content") or args.get("content") for name, args in used if name.startswith("core_memory")]
    assert all(n.splitlines()[0].startswith("progress: ") for n in notes)
    assert any(line.startswith("pending: ") for n in notes for line in n.splitlines())
    assert any(line.startswith("submitted: ") for n in notes for line in n.splitlines())
    assert run.llm_calls > env.steps  # memory calls are LLM calls, not steps
    env2, run2 = episode()
    assert run2.transcript == run.transcript and env2.verifier.events == env.verifier.events


def test_it_reads_accepted_and_pending_units_back_from_its_progress_block(dataops_env) -> None:
    env = dataops_env("dataops-n03-b1")
    units = list(env.records)
    tools = env.schemas() + MEMGPT_TOOLS

    def context(block: str | None) -> list[dict[str, Any]]:
        system = system_prompt(make_controller("standard"))
        if block:
            system += "\n" + g.core_block("progress", block, 2_000)
        return [{"role": "system", "content": system}, {"role": "user", "content": env.task.objective}]

    fresh = SimLM(get_profile("perfect")).act(context(None), tools, 1)
    assert fresh.call.name == "list_units"  # nothing known: it lists the backlog
    notes = "\n".join([g.count_note(1, 3), g.submitted_note(units[:1]), g.pending_note(units[1:])])
    turn = SimLM(get_profile("perfect")).act(context(notes), tools, 1)
    args = turn.call.arguments if isinstance(turn.call.arguments, dict) else json.loads(turn.call.arguments)
    assert turn.call.name == "inspect" and args["unit"] == units[1]  # the first pending unit, from its notes
