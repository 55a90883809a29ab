"""The corpus mind on a long question (``long.py``): one name per part, found in part order.

The objective lists ``Part k:`` headers above each part's clue lines. Every step the mind works
through the parts from the first, each with the clues of it that it recalls (``Plan`` with
``part=True``: its candidates are the hits of that part's own head searches): a part whose
candidate meets every recalled clue is found, and its answer's module (from its docstring
document's ``module:`` line) is what a later ``module_of`` clue refers to. A part before the one its
last call worked on (the clue its ``requirement`` argument named) was settled then: it takes that
part's best candidate (the most clues met by the evidence it recalls) without checking it again.
The first part not found gives the next action; once every part is found (or has no candidate
left), or at its last action of the budget the objective states, it answers with the names in
order (then every part takes its best candidate). Nothing is kept between steps but the messages: a part
found early counts only while some evidence that found it is recalled, so forgetting it all sends
the mind back to that part (and the parts after it are checked again from there).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Callable

from pushbench.tasks.corpus.reader import CLUE_LINE, Clue

if TYPE_CHECKING:
    from pushbench.tasks.corpus.mind import CorpusMind
    from pushbench.tasks.corpus.plan import Plan

_PART = re.compile(r"^Part (\d+):$")
UNKNOWN = "unknown"  # a part with no candidate left is answered with this word


def parts_of(objective: str) -> list[list[str]]:
    """The clue ids of each ``Part k:`` block of an objective, in order ([] without parts)."""
    parts: list[list[str]] = []
    for line in objective.splitlines():
        if _PART.match(line):
            parts.append([])
        elif parts and (m := CLUE_LINE.match(line)):
            parts[-1].append(m.group(1))
    return parts


def solve_parts(mind: "CorpusMind", clues: dict[str, Clue], recalled: set[str], spent: int,
                make_plan: Callable[[dict[str, Clue], str | None], "Plan"]) -> tuple[Any, ...]:
    """The next action (name, arguments), or ("answer", text, confidence) once every part is settled;
    ``make_plan(clues, module)`` is one part's ``Plan`` (this step's recalled facts); ``spent``: the
    actions it counts as taken (its calls in the context, and those a summary's header counts)."""
    last = spent >= int(mind.reader.state.get("budget") or 10**9) - 1  # its last action: answer with what it has
    current = 10**9 if last else _current_part(mind)
    found: list[str] = []
    modules: dict[int, str | None] = {}
    complete = 0
    for p, cids in enumerate(mind.reader.state["parts"], 1):
        known = {cid: clues[cid] for cid in cids if cid in recalled and cid in clues}
        link = next((c for c in known.values() if c.kind == "module_of"), None)
        plan = make_plan(known, modules.get(int(link.a)) if link else None)
        if p < current and (best := plan.best_candidate()):  # settled before the part it works on now
            found.append(best)
            modules[p] = plan.candidate_module(best)
            complete += all(plan.met(clues[c], best) for c in cids if c in clues)
            continue
        action = plan.next_action()
        if action is not None and action[0] != "answer":
            if not last:
                return action
            action = None
        name: str | None = str(action[1]) if action is not None else plan.best_candidate()
        found.append(name or UNKNOWN)
        modules[p] = plan.candidate_module(name) if name else None
        complete += name is not None and all(plan.met(clues[c], name) for c in cids if c in clues)
    parts = len(mind.reader.state["parts"])
    confidence = round(0.3 + 0.7 * complete / parts, 2) if mind.profile.false_negative else 1.0
    return "answer", "; ".join(found), confidence


def _current_part(mind: "CorpusMind") -> int:
    """The part its last call worked on (the clue its ``requirement`` argument names), or 0."""
    call = mind.reader.state.get("last_call") or {}
    try:
        args = json.loads(call.get("arguments") or "{}")
    except (json.JSONDecodeError, TypeError):
        return 0
    requirement = args.get("requirement") if isinstance(args, dict) else None
    return next((p for p, cids in enumerate(mind.reader.state["parts"], 1) if requirement in cids), 0)

