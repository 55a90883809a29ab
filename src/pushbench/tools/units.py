"""Work-unit environment base, shared by the work-unit families (DataOps-lite, SWE-lite).

Contract (read this before building a work-unit family on it)
-------------------------------------------------------------
* A backlog task lists its units in ``TaskSpec.settings["units"]``: a list of
  ``{"id": "U01", "kind": "<unit type>", "title": "<one agent-visible line>"}`` in backlog order.
  ``task.target`` is the number of units that must pass (normally all of them). Metrics
  (``pushbench.scoring.units.unit_metrics``) read the unit kinds from there.
* A family's environment subclasses ``UnitEnvironment`` and implements ``check_unit(unit_id)``:
  a deterministic checker over the episode's current state (the answer given, the edited files)
  returning ``CheckResult(passed, detail)``. It must never raise for a bad agent state: a missing
  answer or an unparsable file is a failed check with a clear ``detail``.
* The verifier is built with ``Verifier(task_id, target, accepts=<anything>, retry_rejected=True)``:
  a rejected unit may be fixed and resubmitted; a repeat of a passed unit is a ``duplicate``.
* Tools provided here: ``list_units()``, ``submit(unit)``, ``status()``, ``final(count)``.
  ``submit`` runs ``check_unit`` and judges through ``verifier.judge(step, unit_id, passed=...)``,
  so a unit counts only if its checker passes at submit time.
* The family adds its own tools (inspect/answer/edit/run_checker for DataOps; read/search/edit/
  run_tests for SWE). Inside them call:
    - ``self.unit(unit)`` to validate a unit id (``ToolError`` for malformed or unknown ids);
    - ``self.note_change(unit_id)`` after an answer or an edit (the unit becomes ``attempted`` and
      "changed since the last checker run");
    - ``self.note_touch(unit_id)`` after a read-only look (pending -> attempted);
    - ``self.checker_observation(unit_id)`` as the whole body of the checker tool (runs the
      checker, records the run, returns the observation with a ``checker`` log payload).
  Set the class attribute ``checker_tool`` to the checker tool's name (``"run_checker"``,
  ``"run_tests"``): controllers use it to steer post-edit behaviour.
* Log payloads (``Observation.payload["log"]``, stored in the verifier's ``call`` events as
  ``info``): every unit tool logs ``{"unit": id, "kind": kind}``; the checker tool adds
  ``"checker": bool``; ``submit`` adds ``"verdict"``. Metrics count checker runs from these.
* Unit state per episode (``UnitRecord``): ``pending`` (never touched) -> ``attempted`` (looked
  at, answered, edited, checked or submitted without passing) -> ``passed`` (accepted at submit).
  ``recovered`` is set when a unit passes after an earlier rejected submit (a verifier recovery).
  Controllers read ``env.records``, ``env.pending_units()``, ``env.attempted_units()``,
  ``env.passed_units()``, ``env.recoveries`` and ``env.checker_runs``; the agent sees none of it
  except through tool results and controller text.
* ``status()`` shows only the verified count (like RepoScan), not which units passed: keeping
  track of the backlog is the agent's (or the controller's) job.
* Requirements (``requirements()``): one per unit, id ``unit:<unit id>``, kind ``unit``: its
  task line, accepted only when its checker passes at submit. Origins: a call whose ``unit``
  argument names a backlog unit serves exactly that unit (any tool with a ``unit`` parameter,
  the family's own included); a call that names none (``list_units``, ``status``, ``final``,
  SWE's ``search_files`` or a ``read_file``/``edit`` without ``unit``) stays unassigned, even
  where the environment attributes it to the unit last named: an origin comes from the call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from pushbench.requirements import Requirement, validate_origins
from pushbench.tools.base import Environment, Observation, ToolError, has_control_chars, tool

UnitState = Literal["pending", "attempted", "passed"]
UNIT_ID = re.compile(r"^[A-Za-z0-9_.-]{1,40}$")
UNIT_PARAM = {"type": "string", "minLength": 1, "maxLength": 40}


@dataclass(frozen=True)
class UnitInfo:
    unit_id: str
    kind: str
    title: str


@dataclass(frozen=True)
class CheckResult:
    passed: bool
    detail: str


@dataclass
class UnitRecord:
    info: UnitInfo
    state: UnitState = "pending"
    changes: int = 0
    changed_since_check: bool = False
    checker_runs: int = 0
    last_check: bool | None = None
    submits: int = 0
    rejected_submits: int = 0
    recovered: bool = False


def units_from_settings(settings: dict[str, Any]) -> list[UnitInfo]:
    rows = settings.get("units")
    if not isinstance(rows, list) or not rows:
        raise ValueError("a work-unit task needs settings['units'] = [{'id', 'kind', 'title'}, ...]")
    return [UnitInfo(str(r["id"]), str(r["kind"]), str(r["title"])) for r in rows]


class UnitEnvironment(Environment):
    """Backlog bookkeeping plus the shared tools; subclasses add the work tools and the checker."""

    # Tool roles, read by the unitqgp controller and the family's metrics (no lists of tool names
    # elsewhere): read-only tools, tools that change a unit, the checker and the submit tool.
    read_tools: tuple[str, ...] = ("list_units", "status")
    change_tools: tuple[str, ...] = ()
    checker_tool = "run_checker"
    submit_tool = "submit"

    @classmethod
    def work_tools(cls) -> tuple[str, ...]:
        return (*cls.change_tools, cls.submit_tool, cls.checker_tool)

    def __init__(self, task: Any, verifier: Any, units: list[UnitInfo] | None = None):
        super().__init__(task, verifier)
        infos = units if units is not None else units_from_settings(task.settings)
        self.records: dict[str, UnitRecord] = {u.unit_id: UnitRecord(u) for u in infos}

    # --- for subclasses ----------------------------------------------------------------------
    def check_unit(self, unit_id: str) -> CheckResult:  # pragma: no cover - abstract
        raise NotImplementedError

    def unit(self, unit_id: str) -> UnitRecord:
        if has_control_chars(unit_id) or not UNIT_ID.match(unit_id):
            raise ToolError(f"unit {unit_id[:40]!r} is not a unit id (letters, digits, '_', '.', '-')")
        record = self.records.get(unit_id)
        if record is None:
            known = ", ".join(self.records)
            raise ToolError(f"unknown unit {unit_id!r}; the backlog's units are: {known}")
        return record

    def note_touch(self, unit_id: str) -> None:
        record = self.records[unit_id]
        if record.state == "pending":
            record.state = "attempted"

    def note_change(self, unit_id: str) -> None:
        record = self.records[unit_id]
        self.note_touch(unit_id)
        record.changes += 1
        record.changed_since_check = True

    def unit_log(self, unit_id: str, **extra: Any) -> dict[str, Any]:
        return {"log": {"unit": unit_id, "kind": self.records[unit_id].info.kind, **extra}}

    def checker_observation(self, unit_id: str) -> Observation:
        record = self.unit(unit_id)
        self.note_touch(unit_id)
        result = self._safe_check(unit_id)
        record.checker_runs += 1
        record.last_check = result.passed
        record.changed_since_check = False
        verdict = "PASS" if result.passed else "FAIL"
        return Observation(f"checker {unit_id}: {verdict}\n{result.detail}",
                           payload=self.unit_log(unit_id, checker=result.passed))

    def _safe_check(self, unit_id: str) -> CheckResult:
        try:
            return self.check_unit(unit_id)
        except OSError as err:  # its message would carry the workspace's absolute path
            return CheckResult(False, f"the checker could not read the unit's files ({err.strerror or type(err).__name__}).")
        except (ValueError, UnicodeError) as err:
            return CheckResult(False, f"the checker could not evaluate the unit: {type(err).__name__}: {err}")

    # --- requirements and origins -------------------------------------------------------------
    def requirements(self) -> list[Requirement]:
        return [Requirement(f"unit:{u}", f"{u} [{r.info.kind}] {r.info.title} (accepted only if "
                            f"{self.checker_tool}({u}) passes at submit)", "unit") for u, r in self.records.items()]

    def action_origins(self, tool: str, arguments: Any) -> tuple[str, ...]:
        if tool not in self.tools:
            return ()
        named = arguments.get("unit") if isinstance(arguments, dict) else None
        mapped = [f"unit:{named}"] if isinstance(named, str) and named and \
            "unit" in self.tools[tool].parameters["properties"] else []
        return validate_origins([*mapped, *super().action_origins(tool, arguments)], self.requirements())

    # --- views for controllers and metrics -----------------------------------------------------
    def units_in(self, state: UnitState) -> list[str]:
        return [u for u, r in self.records.items() if r.state == state]

    def pending_units(self) -> list[str]:
        return self.units_in("pending")

    def attempted_units(self) -> list[str]:
        return self.units_in("attempted")

    def passed_units(self) -> list[str]:
        return self.units_in("passed")

    @property
    def recoveries(self) -> int:
        return sum(r.recovered for r in self.records.values())

    @property
    def checker_runs(self) -> int:
        return sum(r.checker_runs for r in self.records.values())

    # --- shared tools ---------------------------------------------------------------------------
    @tool("List the backlog: every unit's id, type and one-line task.")
    def list_units(self) -> Observation:
        lines = [f"{u} [{r.info.kind}] {r.info.title}" for u, r in self.records.items()]
        return Observation(f"backlog: {len(lines)} units (target {self.task.target} passed)\n" + "\n".join(lines))

    @tool("Submit one unit for verification. Its checker runs on the current state; the verdict is "
          "accepted (checker passed), rejected (checker failed; fix it and submit again) or "
          "duplicate (already accepted).", unit=UNIT_PARAM)
    def submit(self, unit: str) -> Observation:
        record = self.unit(unit)
        self.note_touch(unit)
        result = self._safe_check(unit)
        verdict = self.verifier.judge(self.steps, unit, passed=result.passed)
        record.submits += 1
        if verdict == "accepted":
            record.recovered = record.rejected_submits > 0
            record.state = "passed"
            text = f"submit {unit}: accepted (checker passed)."
        elif verdict == "rejected":
            record.rejected_submits += 1
            text = f"submit {unit}: rejected (checker failed).\n{result.detail}"
        else:
            text = f"submit {unit}: duplicate (this unit was already accepted)."
        return Observation(text, payload=self.unit_log(unit, verdict=verdict))

    @tool("Show the verified number of accepted units and the target.")
    def status(self) -> Observation:
        return Observation(f"status: {self.verifier.valid_count} units accepted (verified) of target "
                           f"{self.task.target}; {self.steps} of {self.task.budget} steps used.")

    @tool("End the episode, reporting how many units you believe were accepted.",
          count={"type": "integer", "minimum": 0, "maximum": 1_000_000})
    def final(self, count: int) -> Observation:
        return self.claim_final(count)
