"""Execution and delivery diagnostics (ACG App. C), computed from the verifier's event log alone.

Six overlapping categories, none causal (an episode can show several):

- **interface rejections**: calls refused as malformed (unknown tool, bad JSON, schema violation, a
  handler's ``ToolError``): ``ok`` False, no ``info.rejection`` and no ``info.tool_failure`` (a tool
  bug is not the agent's mistake);
- **precondition rejections**: well-formed calls a tool refused because of state
  (``info.rejection == "precondition"``, ``pushbench.tools.base.PreconditionError``);
- **budget exhaustion**: the episode ended with the terminal reason ``budget``;
- **repetition**: a block of 1 to ``max_period`` identical calls (same tool, same arguments) occurring
  at least ``min_repeats`` times in a row (params ``diagnostics.repetition``);
- **deliverable presence**: the family's declared artifact (``Declaration.deliverable`` in its
  package, ``tasks/base.Deliverable``) was handed over by an accepted call; **delivered-but-failed**: present and
  the verifier's outcome is a failure. A family that declares none is not assessable (``None``);
- **continuation after rejection**: after the episode's first rejection (interface or precondition),
  did an accepted call follow, and after how many actions (1: the very next one).

An *accepted* call is one the tool executed: ``ok`` and not intercepted by a controller (an
intercepted call is logged ``ok`` but never reached the tool).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from pushbench.tasks.base import TARGET, Deliverable
from pushbench.tools.base import PRECONDITION


def delivered(deliverable: Deliverable, calls: list[dict[str, Any]], target: int) -> bool:
    """Did accepted calls hand the deliverable over (``TARGET``: the task's N calls)?"""
    done = [c["tool"] for c in calls if accepted(c)]
    need = target if deliverable.count == TARGET else deliverable.count
    return any(t in deliverable.or_any for t in done) or sum(t in deliverable.tools for t in done) >= max(1, need)


@dataclass(frozen=True)
class RepetitionRule:
    max_period: int = 3  # patterns of 1, 2 or 3 calls (ACG App. C: "short patterns")
    min_repeats: int = 3  # occurrences in a row; two happen legitimately (one retry, a re-read)

    @classmethod
    def from_params(cls, params: dict[str, Any] | None) -> "RepetitionRule":
        params = params or {}
        rule = cls(int(params.get("max_period", cls.max_period)), int(params.get("min_repeats", cls.min_repeats)))
        if rule.max_period < 1 or rule.min_repeats < 2:
            raise ValueError("diagnostics.repetition needs max_period >= 1 and min_repeats >= 2")
        return rule


@dataclass(frozen=True)
class Continuation:
    rejected: bool  # the episode had at least one rejection
    resumed: bool | None  # an accepted call followed the first rejection (None: no rejection)
    delay: int | None  # actions from the first rejection to that accepted call (None: not resumed)


@dataclass(frozen=True)
class Diagnostics:
    interface_rejections: int
    precondition_rejections: int
    budget_exhausted: bool
    repetition: bool
    repetition_period: int | None  # the shortest repeating block found (None: none)
    deliverable_present: bool | None  # None: the family declares no deliverable
    delivered_but_failed: bool | None
    rejection_episode: bool
    rejection_resumed: bool | None
    rejection_delay: int | None

    def row(self) -> dict[str, Any]:
        return asdict(self)


def calls_of(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e.get("kind") == "call"]


def _info(call: dict[str, Any]) -> dict[str, Any]:
    return call.get("info") or {}


def accepted(call: dict[str, Any]) -> bool:
    return bool(call.get("ok")) and not _info(call).get("intercepted_by")


def is_precondition(call: dict[str, Any]) -> bool:
    return not call.get("ok") and _info(call).get("rejection") == PRECONDITION


def is_interface(call: dict[str, Any]) -> bool:
    info = _info(call)
    return not call.get("ok") and not info.get("rejection") and not info.get("tool_failure")


def is_rejection(call: dict[str, Any]) -> bool:
    return is_interface(call) or is_precondition(call)


def _identity(call: dict[str, Any]) -> str:
    return json.dumps([call.get("tool"), call.get("args")], sort_keys=True, default=str)


def repetition_period(calls: list[dict[str, Any]], rule: RepetitionRule) -> int | None:
    """The shortest block length p <= ``rule.max_period`` such that some block of p calls occurs
    ``rule.min_repeats`` times in a row; None if there is none."""
    ids = [_identity(c) for c in calls]
    for period in range(1, rule.max_period + 1):
        need = (rule.min_repeats - 1) * period  # consecutive j with ids[j] == ids[j + period]
        run = 0
        for j in range(len(ids) - period):
            run = run + 1 if ids[j] == ids[j + period] else 0
            if run >= need:
                return period
    return None


def continuation(calls: list[dict[str, Any]]) -> Continuation:
    first = next((i for i, c in enumerate(calls) if is_rejection(c)), None)
    if first is None:
        return Continuation(False, None, None)
    later = next((i for i in range(first + 1, len(calls)) if accepted(calls[i])), None)
    return Continuation(True, later is not None, None if later is None else later - first)


def diagnose(events: list[dict[str, Any]], target: int, success: bool, deliverable: Deliverable | None,
             rule: RepetitionRule | None = None) -> Diagnostics:
    calls = calls_of(events)
    end = next((e for e in reversed(events) if e.get("kind") == "end"), None)
    period = repetition_period(calls, rule or RepetitionRule())
    present = delivered(deliverable, calls, target) if deliverable is not None else None
    cont = continuation(calls)
    return Diagnostics(
        interface_rejections=sum(map(is_interface, calls)),
        precondition_rejections=sum(map(is_precondition, calls)),
        budget_exhausted=bool(end and end.get("reason") == "budget"),
        repetition=period is not None, repetition_period=period,
        deliverable_present=present,
        delivered_but_failed=None if present is None else present and not success,
        rejection_episode=cont.rejected, rejection_resumed=cont.resumed, rejection_delay=cont.delay)


def family_deliverable(family: str) -> Deliverable | None:
    """The family's declared deliverable, or None (then presence is not assessable)."""
    from pushbench.tasks import declaration

    return declaration(family).deliverable


__all__ = ["Continuation", "Deliverable", "Diagnostics", "RepetitionRule", "TARGET", "accepted", "continuation",
           "delivered", "diagnose", "family_deliverable", "is_interface", "is_precondition", "is_rejection", "repetition_period"]
