"""The perfect reader's real path on a long question, measured at build time (``long.py``).

SimLM's ``perfect`` profile (full recall, a noiseless reader) plays the question on its environment
with the answer known to the build (the verifier's part), the messages a backend would give it
(system prompt, objective, each call and its result). A long question is kept only if it answers
correctly within ``max_oracle_fraction`` of the budget: the path that ``oracle_steps`` records.
"""

from __future__ import annotations

from typing import Any

from pushbench.backends.native import decode, system_prompt
from pushbench.controllers import make_controller
from pushbench.policies.sim import SimLM
from pushbench.tasks.base import TaskSpec
from pushbench.verifier import Verifier


def perfect_path(spec: TaskSpec, valid: str, index: Any, evidence: set[str], seed: int) -> tuple[int, bool]:
    """(tool calls spent, answered correctly) of sim/perfect on ``spec``."""
    from pushbench.tasks.corpus.env import CorpusEnv

    verifier = Verifier(spec.task_id, spec.target, {valid}.__contains__)
    env = CorpusEnv(spec, verifier, index, evidence)
    tools = env.schemas()
    messages: list[dict[str, Any]] = [{"role": "system", "content": system_prompt(make_controller("standard"))},
                                      {"role": "user", "content": spec.objective}]
    sim = SimLM("perfect")
    for _ in range(spec.budget):
        turn = sim.act(messages, tools, seed)
        if turn.call is None:
            return env.steps, False
        messages.append(turn.message)
        obs = env.execute(decode(turn.call))
        messages.append({"role": "tool", "tool_call_id": turn.call.call_id, "content": obs.text})
        if obs.done:
            log = (obs.payload or {}).get("log", {})
            return env.steps, bool(log.get("correct"))
    return env.steps, False
