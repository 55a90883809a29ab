"""Source-grounded memory units: observation records with every occurrence that produced them.

Granularity. An observation's text is split into *records*, the smallest piece a decision can cite:
a line starts a record unless it continues the one before — indented by four spaces or more (a
search hit's matched lines ``    L12: ...``), a numbered file line (``  12| ...``), a table row
(``row 12: ...``) or a table's ``columns:`` line — and a checker result (``checker U01: FAIL``) keeps
its detail lines up to the next checker result, so the verdict is never cited without its reason.
So one search hit, one verdict line, one checker result, one backlog entry or one file region is
one record. A record with more than
``REGION_LINES`` numbered lines (an inspected page), or a checker result with more detail lines than
that, is cut into regions of that many, each carrying
the record's header (its first line and any lines before the numbered ones). Guidance lines (``[controller]``,
``[progress]``, ``[memory]``) are not evidence: they describe the step they were shown at and stay
in the transcript.

Identity. A unit is a piece of content; each :class:`Occurrence` is one observation event that
showed it (step, tool, arguments, call id, and that event's validated requirement ids). The same
text shown by two events is one unit with two occurrences: the events stay distinct, and nothing
about one is attributed to the other.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from pushbench.memory.base import Event

REGION_LINES = 12  # body lines per file region
GUIDANCE = ("[controller]", "[progress]", "[memory]")
_NUMBERED = re.compile(r"^(?:\s*\d+\||row \d+: )")  # a file line or a table row, as tools number them
_CONTINUES = re.compile(r"^(?: {4,}|\s*\d+\||row \d+: |columns: )")
_RESULT = re.compile(r"^checker \S+: ")  # a checker result's first line; its detail lines follow it


@dataclass(frozen=True)
class Occurrence:
    event: int  # index of the observation event among all ingested events
    step: int
    tool: str  # "" for a message no tool produced (e.g. a controller's reply to a stop)
    arguments: str  # canonical JSON of the call's arguments
    call_id: str
    requirements: tuple[str, ...]  # validated requirement ids of the producing action (may be empty)


@dataclass
class Unit:
    id: int  # insertion order, stable
    text: str
    occurrences: list[Occurrence] = field(default_factory=list)
    _links: tuple[int, tuple[str, ...]] | None = field(default=None, repr=False, compare=False)

    @property
    def first(self) -> Occurrence:
        return self.occurrences[0]

    @property
    def last(self) -> Occurrence:
        return self.occurrences[-1]

    def requirements(self) -> tuple[str, ...]:
        """Every requirement an occurrence's producing action served, first seen first (kept while
        no occurrence is added: occurrences are only ever appended)."""
        if self._links is None or self._links[0] != len(self.occurrences):
            self._links = (len(self.occurrences),
                           tuple(dict.fromkeys(r for o in self.occurrences for r in o.requirements)))
        return self._links[1]

    def occurs_in(self, event: int) -> bool:
        return any(o.event == event for o in self.occurrences)


def records(text: str) -> list[str]:
    """The records of one observation's text, in order (see the module notes)."""
    groups: list[list[str]] = []
    for line in text.splitlines():
        if not line.strip() or line.startswith(GUIDANCE):
            continue
        if groups and (_CONTINUES.match(line) or (_RESULT.match(groups[-1][0]) and not _RESULT.match(line))):
            groups[-1].append(line)
        else:
            groups.append([line])
    out: list[str] = []
    for group in groups:
        lead = 1  # the header and any lines before the first numbered one (a table's columns line)
        while lead < len(group) and not _NUMBERED.match(group[lead]) and not _RESULT.match(group[0]):
            lead += 1
        head, body = group[:lead], group[lead:]
        if len(body) <= REGION_LINES:
            out.append("\n".join(group))
            continue
        for start in range(0, len(body), REGION_LINES):
            out.append("\n".join([*head, *body[start:start + REGION_LINES]]))
    return out


def canonical_arguments(arguments: Any) -> str:
    try:
        return json.dumps(arguments if arguments is not None else {}, sort_keys=True, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return json.dumps(str(arguments))


def origin_requirements(origin: dict[str, Any], known: Iterable[str]) -> tuple[str, ...]:
    """The event's requirement ids that name a bound requirement exactly; anything else is dropped.

    The backend already validated them (``requirements.validate_origins``); this second check keeps
    a stale or foreign id from attaching evidence to a requirement. Missing: unassigned."""
    ids = origin.get("requirements")
    if not isinstance(ids, (list, tuple)):
        return ()
    allowed = set(known)
    return tuple(dict.fromkeys(i for i in ids if isinstance(i, str) and i in allowed))


class UnitStore:
    """All units of an episode, deduplicated by content, with their occurrences."""

    def __init__(self) -> None:
        self.units: list[Unit] = []
        self.by_text: dict[str, int] = {}
        self.by_event: dict[int, list[int]] = {}  # observation event -> its units, in record order

    def __len__(self) -> int:
        return len(self.units)

    def add_observation(self, index: int, event: Event, known: Iterable[str]) -> tuple[list[int], list[int]]:
        """Record the event's units; returns (all its unit ids in order, the ids that are new)."""
        origin = event.origin or {}
        occurrence = Occurrence(index, event.step, str(origin.get("tool") or ""),
                                canonical_arguments(origin.get("arguments")), str(origin.get("call_id") or ""),
                                origin_requirements(origin, known))
        members, new = [], []
        for text in records(str(event.message.get("content") or "")):
            uid = self.by_text.get(text)
            if uid is None:
                uid = self.by_text[text] = len(self.units)
                self.units.append(Unit(uid, text))
                new.append(uid)
            unit = self.units[uid]
            if not unit.occurs_in(index):  # a record repeated inside one event is one occurrence
                unit.occurrences.append(occurrence)
                members.append(uid)
        self.by_event[index] = members
        return members, new
