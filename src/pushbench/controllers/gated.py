"""Verifier-gated completion: blocks final (and stopping) while verified < target; no other state."""

from __future__ import annotations

from typing import Any

from pushbench.controllers.base import Controller, Intercept, final_gate
from pushbench.tools.base import ToolCall


class GatedController(Controller):
    name = "gated"

    def before(self, call: ToolCall, env: Any) -> ToolCall | Intercept:
        return final_gate(call, env) or call

    def on_stop(self, env: Any) -> Intercept | None:
        return final_gate(ToolCall("final", {}), env)
