"""The typed episode row and trace, and the format version check both are read through.

``FORMAT`` is the run-folder format this code writes. Format 1 is the files written before
versions existed: the same fields, no ``format`` key (a reader takes a file without one as format
1, with a note); format 2 adds the key. A file of a newer format than ``FORMAT`` is refused with
one line, never half-read.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

FORMAT = 2
UNVERSIONED = 1  # what a file without a ``format`` key is
FORMAT_KEY = "format"  # the version's key in a row and a trace (not a fact: tables drop it)


class FormatError(ValueError):
    """A row or trace this code cannot read (the message is one line for the user)."""


_noted: set[str] = set()


def check_format(data: dict[str, Any], where: Path | str, folder: Path | None = None) -> int:
    """The format version of a row or trace read from ``where`` (in ``folder``: the note on an
    unversioned file names it; default the folder of ``where``); a newer one is refused."""
    value = data.get(FORMAT_KEY, UNVERSIONED)
    if isinstance(value, bool) or not isinstance(value, int) or value < UNVERSIONED:
        raise FormatError(f"{where}: {value!r} is not a run-folder format version")
    if value > FORMAT:
        raise FormatError(f"{where}: run-folder format {value} is newer than this PushBench reads "
                          f"(format {FORMAT} at most); update PushBench to read it")
    if value == UNVERSIONED and FORMAT_KEY not in data:
        _note(folder if folder is not None else Path(where).parent)
    return value


def _note(folder: Path) -> None:
    """Once per folder and process: its files predate format versions and are read as format 1."""
    if str(folder) not in _noted:
        _noted.add(str(folder))
        print(f"note: {folder} holds files without a format version (written before versions); "
              f"read as run-folder format {UNVERSIONED}", file=sys.stderr)


def _check(value: Any, types: tuple[type, ...], what: str, where: Path | str) -> None:
    if isinstance(value, bool) and bool not in types or not isinstance(value, types):
        names = " or ".join("null" if t is type(None) else t.__name__ for t in types)
        raise FormatError(f"{where}: {what} is {type(value).__name__}, not {names}")


_ROW_TYPES: dict[str, tuple[type, ...]] = {
    "episode_id": (str,), "family": (str,), "task_id": (str,), "controller": (str,), "memory": (str,),
    "model": (str,), "backend": (str,), "seed": (int,), "target": (int,), "budget": (int,),
    "llm_calls": (int, type(None)), "input_tokens": (int, type(None)), "output_tokens": (int, type(None))}


@dataclass(frozen=True)
class EpisodeRow:
    """One line of ``episodes.jsonl``: an episode's raw facts (its conditions, target, budget, LLM
    calls and tokens). ``extra`` holds what a particular writer adds (a fork's parent and step, the
    black-box harness's metrics); no metric of a run is computed before scoring."""

    episode_id: str
    family: str
    task_id: str
    controller: str
    memory: str
    model: str
    backend: str
    seed: int
    target: int
    budget: int
    llm_calls: int | None  # None: a black-box agent that reported no usage
    input_tokens: int | None
    output_tokens: int | None
    extra: dict[str, Any] = field(default_factory=dict)
    format: int = FORMAT

    @classmethod
    def from_facts(cls, facts: dict[str, Any], where: Path | str = "an episode row",
                   version: int = FORMAT) -> EpisodeRow:
        """A row from its facts (a writer's dict, or a parsed line without its ``format`` key)."""
        missing = [k for k in _ROW_TYPES if k not in facts]
        if missing:
            raise FormatError(f"{where}: the episode row lacks {', '.join(missing)}")
        for key, types in _ROW_TYPES.items():
            _check(facts[key], types, key, where)
        core = {k: facts[k] for k in _ROW_TYPES}
        extra = {k: v for k, v in facts.items() if k not in _ROW_TYPES and k != FORMAT_KEY}
        return cls(**core, extra=extra, format=version)

    @classmethod
    def from_json(cls, data: dict[str, Any], where: Path | str, folder: Path | None = None) -> EpisodeRow:
        return cls.from_facts(data, where, check_format(data, where, folder))

    def facts(self) -> dict[str, Any]:
        """The row's facts without the format version (what scoring and the tables carry on)."""
        return {**{k: getattr(self, k) for k in _ROW_TYPES}, **self.extra}

    def as_json(self) -> dict[str, Any]:
        return {**self.facts(), FORMAT_KEY: self.format}


_TRACE_TYPES: dict[str, tuple[type, ...]] = {
    "episode_id": (str,), "events": (list,), "objective": (str,), "messages": (list,), "views": (dict,),
    "tool_failures": (list,), "wall_seconds": (int, float), "api": (dict,), "parent": (str,),
    "fork_step": (int,), "agent": (str,), "prompt": (str,), "exit_code": (int,), "timed_out": (bool,),
    "error": (str,)}


@dataclass(frozen=True)
class Trace:
    """One episode's trace: the verifier's events and, for an episode of the native loop, the task
    text, every message and the view each external turn was sent (``memory.viewlog``). Optional
    parts are None when absent (and not written): ``tool_failures`` (handler tracebacks),
    ``wall_seconds`` (not in the DVC stages' traces), ``api`` (an API client's counts), ``parent``
    and ``fork_step`` (a fork), ``agent`` ... ``timed_out`` (a black-box agent), ``error`` (an
    episode that raised on a Ray worker)."""

    episode_id: str
    events: list[dict[str, Any]]
    objective: str | None = None
    messages: list[dict[str, Any]] | None = None
    views: dict[str, Any] | None = None
    tool_failures: list[dict[str, Any]] | None = None
    wall_seconds: float | None = None
    api: dict[str, Any] | None = None
    parent: str | None = None
    fork_step: int | None = None
    agent: str | None = None
    prompt: str | None = None
    exit_code: int | None = None
    timed_out: bool | None = None
    error: str | None = None
    format: int = FORMAT

    @classmethod
    def from_json(cls, data: Any, where: Path | str) -> Trace:
        if not isinstance(data, dict):
            raise FormatError(f"{where}: a trace is a JSON object, not {type(data).__name__}")
        version = check_format(data, where)
        unknown = sorted(set(data) - set(_TRACE_TYPES) - {FORMAT_KEY})
        if unknown:
            raise FormatError(f"{where}: unknown trace field(s) {', '.join(unknown)} for format {version}")
        for key in ("episode_id", "events"):
            if key not in data:
                raise FormatError(f"{where}: the trace lacks {key}")
        for key, value in data.items():
            if key != FORMAT_KEY and value is not None:
                _check(value, _TRACE_TYPES[key], key, where)
        return cls(**{k: v for k, v in data.items() if k != FORMAT_KEY}, format=version)

    def as_json(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}

    @property
    def transcript(self) -> list[dict[str, Any]]:
        """The messages, or none (a black-box agent's trace keeps its events only)."""
        return self.messages if self.messages is not None else []
