"""Synthetic episodes for the ACG tests: work-unit traffic with (sometimes missing) origins."""

from __future__ import annotations

import random
from typing import Any

from pushbench.memory.acg import ACGMemory
from pushbench.memory.base import Event
from pushbench.policies.base import tool_call_message
from pushbench.requirements import Requirement

UNITS = ["U01", "U02", "U03", "U04", "U05"]
REQUIREMENTS = [Requirement(f"unit:{u}", f"{u}: fix the value of field_{u.lower()} in table_{u.lower()}.csv", "unit")
                for u in UNITS] + [Requirement("count", "Have all 5 units accepted.", "count")]
TASK = "Work through a backlog of 5 data-operations units; each has a checker."


def observation(rnd: random.Random, step: int) -> tuple[str, dict[str, Any], str, list[str] | None]:
    """(tool, arguments, reply text, origin ids or None for an old trace) of one step."""
    unit = rnd.choice(UNITS)
    kind = rnd.random()
    ids: list[str] | None = [f"unit:{unit}"]
    if rnd.random() < 0.2:
        ids = None  # no origin recorded
    elif rnd.random() < 0.1:
        ids = ["unit:U99"]  # an id the task does not have
    if kind < 0.3:
        rows = "\n".join(f"{i:4d}| {unit.lower()},{rnd.randint(0, 99)},field_{unit.lower()}" for i in range(1, rnd.randint(3, 30)))
        return "inspect", {"unit": unit, "page": 1}, f"{unit} table_{unit.lower()}.csv: lines 1-20 (page 1 of 1)\n{rows}", ids
    if kind < 0.55:
        return "run_checker", {"unit": unit}, f"checker {unit}: {rnd.choice(['PASS', 'FAIL'])}", ids
    if kind < 0.75:
        return "submit", {"unit": unit}, f"submit {unit}: {rnd.choice(['accepted', 'rejected'])} (checker ran).", ids
    if kind < 0.9:
        return "list_units", {}, "backlog: 5 units\n" + "\n".join(f"{u} [csv_field] fix field_{u.lower()}" for u in UNITS), None
    return "status", {}, f"status: {rnd.randint(0, 5)} units accepted (verified) of target 5\n[progress] verified accepted 1/5", None


def events(seed: int, steps: int) -> list[Event]:
    rnd = random.Random(seed)
    out = []
    for step in range(1, steps + 1):
        tool, args, text, ids = observation(rnd, step)
        call = tool_call_message(tool, args, f"c{step}")
        out.append(Event(step, "action", call))
        origin: dict[str, Any] = {"tool": tool, "arguments": args, "call_id": f"c{step}"}
        if ids is not None:
            origin["requirements"] = ids
        out.append(Event(step, "observation", {"role": "tool", "tool_call_id": f"c{step}", "content": text}, origin))
    return out


def fed(seed: int, steps: int, bind: bool = True, **kwargs: Any) -> ACGMemory:
    memory = ACGMemory(**kwargs)
    memory.start("You are an agent.", TASK)
    if bind:
        memory.bind_requirements(REQUIREMENTS)
    for event in events(seed, steps):
        memory.ingest(event)
    return memory
