"""The controller contract: it sits between the policy and the environment.

``before`` may pass an action through, rewrite it, or intercept it (``Intercept``: the action
costs a step and the agent sees the controller's text instead of a tool result). ``after`` may add
to the observation. ``on_stop`` decides whether a text-only reply (the model stopping) ends the
episode. Every effect reaches the model only through message text, so it is visible in the trace.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pushbench.tools.base import Observation, ToolCall


@dataclass
class Intercept:
    text: str


class Controller:
    name = "standard"

    def system_note(self) -> str:
        return ""

    def before(self, call: ToolCall, env: Any) -> ToolCall | Intercept:
        return call

    def after(self, call: ToolCall, obs: Observation, env: Any) -> Observation:
        return obs

    def on_stop(self, env: Any) -> Intercept | None:
        return None


def final_gate(call: ToolCall, env: Any) -> Intercept | None:
    """Block ``final`` while the verified count is below the target (the gated invariant)."""
    if call.name != "final":
        return None
    verified, target = env.verifier.valid_count, env.task.target
    if verified >= target:
        return None
    return Intercept(f"[controller] final blocked: the verifier has accepted {verified} of the target "
                     f"{target}. The episode continues; keep working toward {target}.")
