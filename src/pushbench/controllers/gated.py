"""Verifier-gated completion: blocks final (and stopping) while verified < target; no other state."""

from __future__ import annotations

from pushbench.controllers.base import Controller, Intercept, final_gate
from pushbench.tools.base import Environment, ToolCall


class GatedController(Controller):
    name = "gated"

    def before(self, call: ToolCall, env: Environment) -> ToolCall | Intercept:
        return final_gate(call, env) or call

    def on_stop(self, env: Environment) -> Intercept | None:
        return final_gate(ToolCall("final", {}), env)
