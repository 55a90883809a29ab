"""The controller contract: it sits between the policy and the environment.

``before`` may pass an action through, rewrite it, or intercept it (``Intercept``: the action
costs a step and the agent sees the controller's text instead of a tool result). ``after`` may add
to the observation. ``on_stop`` decides whether a text-only reply (the model stopping) ends the
episode. Every effect reaches the model only through message text, so it is visible in the trace.

To steer SimLM, emit these forms: the offline model acts only on text it parses, and the forms it
parses live in ``pushbench.guidance`` (render with its functions; ``guidance.FORMS`` says which
forms SimLM reads). SimLM reads:

- ``guidance.final_blocked`` (``[controller] final blocked: ...``): keeps working (per profile);
- ``guidance.item_progress`` / ``guidance.unit_progress`` (``[progress] verified accepted V/T · ...``
  as the last line of an observation): the verified count; the ``read:`` field (pages read per
  query) and the ``passed:`` field (accepted units);
- ``guidance.all_pages_read``: every page of that query counts as read;
- ``guidance.buffered_hits`` (then the family's hit lines): submit the hits shown again;
- ``guidance.next_unit`` (``[controller] Next: U [kind] title``): read like a backlog line;
- ``guidance.submit_now`` / ``guidance.check_next``: submit the unit / run its checker (per profile).

Its other forms (page advanced, ids removed, nothing sent, unit already accepted, checked instead,
failed and unchanged, repeated call, stale, all accepted, the unit block's ``next:`` field) and a
controller's ``system_note`` (``guidance.ITEM_RULES``, ``guidance.UNIT_RULES``) are for real
models: SimLM does not act on them (``tests/test_guidance.py`` lists each with its reason). Text
outside the vocabulary reaches real models only; ``tests/test_guidance.py`` fails on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pushbench import guidance
from pushbench.tools.base import Environment, Observation, ToolCall


@dataclass
class Intercept:
    text: str


class Controller:
    name = "standard"

    def system_note(self) -> str:
        return ""

    def before(self, call: ToolCall, env: Environment) -> ToolCall | Intercept:
        return call

    def after(self, call: ToolCall, obs: Observation, env: Environment) -> Observation:
        return obs

    def on_stop(self, env: Environment) -> Intercept | None:
        return None


def final_gate(call: ToolCall, env: Environment) -> Intercept | None:
    """Block ``final`` while the verified count is below the target (the gated invariant)."""
    if call.name != "final":
        return None
    verified, target = env.verifier.valid_count, env.task.target
    if verified >= target:
        return None
    return Intercept(guidance.final_blocked(verified, target))
