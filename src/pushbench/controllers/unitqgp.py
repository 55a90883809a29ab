"""UnitQGP: backlog state for work-unit families (DataOps-lite, SWE-lite).

It reads the environment's unit bookkeeping (``tools/units.py``: pending / attempted / passed,
changed since the last checker run, last checker result) and acts only through message text:
- a ``[progress]`` block in every observation: verified count, passed, attempted and pending
  units, and the unit to work on next (with its task line);
- post-edit steering: a submit of a unit answered or edited since its last checker run (or never
  checked) becomes a run of the checker; a submit of a unit whose checker failed with nothing
  changed since is refused with the reason;
- redirects: any action on an already accepted unit, an exact repeat of the previous executed
  call, and a stale stretch (``stale_limit`` steps without an answer, edit, checker run or
  submit) are turned toward the next unit
  (a checker-passed unit is submitted, otherwise the agent is pointed at an attempted or pending unit);
- gated final (and stopping) while the verified count is below the target;
- ``recoveries``: units that failed verification after an attempt (a rejected submit, or a checker
  FAIL once answered or edited) and passed later (``scoring.units.unit_metrics`` uses the same rule).
"""

from __future__ import annotations

import json
from typing import Any, cast

from pushbench import guidance
from pushbench.controllers.base import Controller, Intercept, final_gate
from pushbench.tools.base import Environment, Observation, ToolCall
from pushbench.tools.units import UnitEnvironment


class UnitQGPController(Controller):
    name = "unitqgp"

    def __init__(self, stale_limit: int = 8):
        self.stale_limit = stale_limit
        self.failed: set[str | None] = set()  # a rejection logged without a unit is kept as None
        self.attempted: set[str] = set()
        self.recovered: set[str | None] = set()
        self.since_work = 0  # executed steps since the last answer, edit, checker run or submit
        self.last_key: tuple[str, str] | None = None
        self.focus: str | None = None  # the unit of the agent's latest unit action
        self.notes: list[str] = []
        self.intercepted = False

    @property
    def recoveries(self) -> int:
        return len(self.recovered)

    def system_note(self) -> str:
        return guidance.UNIT_RULES

    # --- before the action -------------------------------------------------------------------
    def before(self, call: ToolCall, env: Environment) -> ToolCall | Intercept:
        self.notes = []
        decision = self._decide(call, _units(env))
        self.intercepted = isinstance(decision, Intercept)
        return decision

    def _decide(self, call: ToolCall, env: UnitEnvironment) -> ToolCall | Intercept:
        gate = final_gate(call, env)
        if gate:
            return Intercept(f"{gate.text}\n{self._next_line(env)}")
        args = call.arguments if isinstance(call.arguments, dict) else None
        if args is None:
            return call
        repeat = self._key(call, env) == self.last_key
        unit = args.get("unit")
        record = env.records.get(unit) if isinstance(unit, str) else None
        if record is not None and record.state == "passed" and call.name != "status":
            return Intercept(f"{guidance.already_accepted(cast(str, unit))}\n{self._next_line(env, exclude=unit)}")
        if record is not None and call.name == env.submit_tool:
            steer = self._steer_submit(cast(str, unit), record, call, env)  # a record exists only for a str unit
            if steer is not None:
                return steer
        if repeat and call.name in (*env.read_tools, env.checker_tool):
            return Intercept(f"{guidance.REPEATED}\n{self._next_line(env)}")
        if self.since_work >= self.stale_limit and call.name not in env.work_tools():
            self.since_work = 0  # at most one redirect per stale stretch
            return self._unstick(call, env)
        if record is not None:
            self.focus = unit
        return call

    def _steer_submit(self, unit: str, record: Any, call: ToolCall, env: UnitEnvironment) -> ToolCall | Intercept | None:
        if record.changed_since_check or record.last_check is None:
            self.notes.append(guidance.checked_instead(unit, env.checker_tool))
            return ToolCall(env.checker_tool, {"unit": unit}, call.call_id)
        if record.last_check is False:
            return Intercept(guidance.failed_unchanged(unit, env.checker_tool))
        return None

    def _unstick(self, call: ToolCall, env: UnitEnvironment) -> ToolCall | Intercept:
        ready = self._ready(env)
        if ready:
            self.notes.append(guidance.stale_submit(self.stale_limit, ready[0]))
            return ToolCall(env.submit_tool, {"unit": ready[0]}, call.call_id)
        return Intercept(f"{guidance.stale(self.stale_limit)}\n{self._next_line(env)}")

    # --- after the action --------------------------------------------------------------------
    def after(self, call: ToolCall, obs: Observation, env: Environment) -> Observation:
        units, extra = _units(env), list(self.notes)
        info = obs.payload.get("log") or {}
        unit = info.get("unit")
        accepted = False
        if unit is not None and "checker" in info:
            if info["checker"]:
                extra.append(guidance.submit_now(unit))
            elif unit in self.attempted:
                self.failed.add(unit)
        verdict = info.get("verdict")
        if verdict == "rejected":
            self.failed.add(unit)
        elif verdict == "accepted":
            accepted = True
            if unit in self.failed:
                self.recovered.add(unit)
        if not self.intercepted:
            self.last_key = self._key(call, units)
        worked = unit is not None and call.name in units.work_tools()
        self.since_work = 0 if worked or accepted else self.since_work + 1
        if obs.ok and call.name in units.change_tools and unit is not None:
            self.attempted.add(unit)
            extra.append(guidance.check_next(units.checker_tool, unit))
        obs.text = "\n".join([obs.text, *extra, self._progress(units)])
        return obs

    @staticmethod
    def _key(call: ToolCall, env: Environment) -> tuple[str, str]:
        """The call with its schema defaults filled in (``inspect(U1)`` repeats ``inspect(U1, page=1)``)."""
        spec = env.tools.get(call.name)
        props = spec.parameters.get("properties", {}) if spec else {}
        args = call.arguments if isinstance(call.arguments, dict) else {"raw": str(call.arguments)}
        full = {**{k: v["default"] for k, v in props.items() if "default" in v}, **args}
        return call.name, json.dumps(full, sort_keys=True, default=str)

    # --- state views -------------------------------------------------------------------------
    def _ready(self, env: UnitEnvironment) -> list[str]:
        return [u for u, r in env.records.items()
                if r.state != "passed" and r.last_check is True and not r.changed_since_check]

    def next_unit(self, env: UnitEnvironment, exclude: str | None = None) -> str | None:
        """Continue the current unit, else a checker-passed one, else attempted, else pending."""
        records = env.records
        if self.focus in records and self.focus != exclude and records[self.focus].state != "passed":
            return self.focus
        for group in (self._ready(env), env.attempted_units(), env.pending_units()):
            for unit in group:
                if unit != exclude:
                    return unit
        return None

    def _next_line(self, env: UnitEnvironment, exclude: str | None = None) -> str:
        unit = self.next_unit(env, exclude)
        if unit is None:
            return guidance.ALL_ACCEPTED
        info = env.records[unit].info
        return guidance.next_unit(unit, info.kind, info.title)

    def _progress(self, env: UnitEnvironment) -> str:
        verified, target = env.verifier.valid_count, env.task.target
        attempted = [(u, "PASS" if r.last_check and not r.changed_since_check else "FAIL" if r.last_check is False
                      else "not run") for u, r in env.records.items() if r.state == "attempted"]
        return guidance.unit_progress(verified, target, env.passed_units(), attempted, env.pending_units(),
                                      self.next_unit(env))

    def on_stop(self, env: Environment) -> Intercept | None:
        gate = final_gate(ToolCall("final", {}), env)
        return Intercept(f"{gate.text}\n{self._next_line(_units(env))}") if gate else None


def _units(env: Environment) -> UnitEnvironment:
    if not isinstance(env, UnitEnvironment):
        raise TypeError(f"the unitqgp controller needs a work-unit family (the tool role 'units'); task "
                        f"{env.task.task_id!r} is not one (use stateqgp for item-set families)")
    return env
