"""The perfect reader's real path on a long question, measured at build time (``long.py``).

SimLM's ``perfect`` profile (full recall, a noiseless reader) plays the question on its environment
through the native backend (``run_native``: the standard controller, ``full`` memory, an unlimited
window), with the answer known to the build (the verifier's part). A long question is kept only if
it answers correctly within ``max_oracle_fraction`` of the budget and its final transcript holds at
least ``min_transcript_tokens``: the path that ``oracle_steps`` records.
"""

from __future__ import annotations

from typing import Any

from pushbench.tasks.base import TaskSpec


def perfect_path(spec: TaskSpec, valid: str, index: Any, evidence: set[str], seed: int,
                 max_steps: int | None = None) -> tuple[int, bool, int]:
    """(tool calls spent, answered correctly, its final transcript's tokens) of sim/perfect on ``spec``,
    stopped after ``max_steps`` calls: a longer path is not kept, and the mind reads its budget from
    the objective, so a path that ends within them is the one the whole budget gives."""
    from pushbench.backends.native import run_native
    from pushbench.policies.sim import SimLM
    from pushbench.registry import CONTROLLERS, MEMORIES
    from pushbench.tasks.corpus.env import CorpusEnv
    from pushbench.tokens import count_message_tokens
    from pushbench.verifier import Verifier

    played = spec.model_copy(update={"budget": min(spec.budget, max_steps or spec.budget)})
    env = CorpusEnv(played, Verifier(spec.task_id, spec.target, {valid}.__contains__), index, evidence)
    run = run_native(env, SimLM("perfect"), CONTROLLERS.make("standard"), MEMORIES.make("full"), seed)
    return env.steps, env.verifier.valid_count >= spec.target, count_message_tokens(run.transcript)
