"""The perfect reader's real path on a long question, measured at build time (``long.py``).

SimLM's ``perfect`` profile (full recall, a noiseless reader) plays the question on its environment
through the native backend (``run_native``: the standard controller, ``full`` memory, an unlimited
window), with the answer known to the build (the verifier's part). A long question is kept only if
it answers correctly within ``max_oracle_fraction`` of the budget: the path that ``oracle_steps``
records.
"""

from __future__ import annotations

from typing import Any

from pushbench.tasks.base import TaskSpec


def perfect_path(spec: TaskSpec, valid: str, index: Any, evidence: set[str], seed: int) -> tuple[int, bool]:
    """(tool calls spent, answered correctly) of sim/perfect on ``spec``."""
    from pushbench.backends.native import run_native
    from pushbench.policies.sim import SimLM
    from pushbench.registry import CONTROLLERS, MEMORIES
    from pushbench.tasks.corpus.env import CorpusEnv
    from pushbench.verifier import Verifier

    env = CorpusEnv(spec, Verifier(spec.task_id, spec.target, {valid}.__contains__), index, evidence)
    run_native(env, SimLM("perfect"), CONTROLLERS.make("standard"), MEMORIES.make("full"), seed)
    return env.steps, env.verifier.valid_count >= spec.target
