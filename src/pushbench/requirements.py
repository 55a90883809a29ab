"""Requirements with ids, and the validated origin links of actions to them.

A family declares its task's requirements (``Environment.requirements()``): RepoScan's target
count, distinctness and predicate; each work unit of DataOps-lite and SWE-lite with its checker;
the planning and corpus families' constraints and clues. An executed action *serves* the
requirements its origin names (``Environment.action_origins``): ids from arguments that name a
unit or requirement, or a family's deterministic mapping. Every id is validated against the
task's list; an unknown id is dropped and a name that matches several requirements stays
unassigned. Origins are never inferred from text similarity.

The backends put the validated ids of each executed call into its observation event
(``Event.origin["requirements"]``) and hand the list to a memory that has
``bind_requirements(requirements)``, so every memory sees the same links.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable


@dataclass(frozen=True)
class Requirement:
    id: str  # stable within the task, e.g. "count", "unit:u03"
    text: str  # what must hold, in the task's words
    kind: str  # "count" | "distinct" | "predicate" | "unit" | a family's own kind


def validate_origins(candidates: Iterable[Any], requirements: Iterable[Requirement]) -> tuple[str, ...]:
    """The candidates that name exactly one known requirement, in order, without repeats.

    A candidate matches a requirement by its id; a bare unit name ``u03`` also matches ``unit:u03``
    when that is the only requirement ending in ``:u03``. Anything else stays unassigned.
    """
    known = [r.id for r in requirements]
    ids = set(known)
    chosen: list[str] = []
    for candidate in candidates:
        if not isinstance(candidate, str) or not candidate:
            continue
        if candidate in ids:
            match = candidate
        else:
            suffix = [k for k in known if k.endswith(":" + candidate)]
            if len(suffix) != 1:
                continue
            match = suffix[0]
        if match not in chosen:
            chosen.append(match)
    return tuple(chosen)


def requirement_argument(arguments: Any) -> list[Any]:
    """The optional ``requirement`` argument of a call (one id or a list of ids), as a list."""
    if not isinstance(arguments, dict):
        return []
    value = arguments.get("requirement")
    if isinstance(value, list):
        return value
    return [] if value is None else [value]
