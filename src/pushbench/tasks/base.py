"""The task contract: an agent-visible spec, hidden answers, a family that builds and runs them, and
the declaration a family's package makes about itself (``Declaration``)."""

from __future__ import annotations

import json
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from pushbench.tools.base import Environment


class TaskSpec(BaseModel):
    """One task instance as the agent may see it (a row of ``data/manifests/<family>.jsonl``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    task_id: str
    family: str
    objective: str
    target: int
    budget: int
    tools: list[str]
    oracle_steps: int
    settings: dict[str, Any] = {}  # family-specific fields (units, page sizes, ...)
    repo: str | None = None  # the snapshot (or data set) the task is built on, where there is one
    predicate: str | None = None  # RepoScan's predicate family (and rows' condition)


class BuiltTask(BaseModel):
    spec: TaskSpec
    hidden: dict[str, Any]


class TaskFamily(Protocol):
    """A family builds its tasks from params and makes a fresh environment for one episode.

    ``name`` is its registry name (set by ``pushbench.tasks.get_family``). ``episode_metrics`` is the
    family's scoring hook: its own metrics from the verifier events of one episode
    (``pushbench.scoring`` adds the common ones). Optionally, ``warm(tasks)`` fills the caches every
    episode of these tasks shares, in the runner's parent process (``runner/warm.py``).
    """

    name: str

    def build(self, params: dict[str, Any], snapshot_root: Path | None = None) -> list[BuiltTask]: ...

    def environment(self, task: TaskSpec, snapshot_root: Path | None = None, hidden_root: Path | None = None,
                    sink: Any = None) -> "Environment": ...

    def episode_metrics(self, events: list[dict[str, Any]], task: TaskSpec) -> dict[str, Any]: ...


@runtime_checkable
class WarmFamily(Protocol):
    """A family with shared caches to fill once, in the runner's parent, before its workers fork."""

    def warm(self, tasks: list[TaskSpec]) -> None: ...


def task_split(task: TaskSpec) -> str:
    """A task's split: ``settings.split`` where a family has long-horizon tasks ("long"), else "short"."""
    return str(task.settings.get("split", "short"))


def write_manifest(path: Path, tasks: list[TaskSpec]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [json.dumps(t.model_dump(), sort_keys=True) for t in sorted(tasks, key=lambda t: t.task_id)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


def read_manifest(path: Path) -> list[TaskSpec]:
    if not path.is_file():
        raise FileNotFoundError(f"no manifest at {path}; run `pushbench manifests build`")
    return [TaskSpec.model_validate_json(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


# --- what a family declares about itself ---------------------------------------------------------
# A family's package (``tasks/<name>/__init__.py``) holds ``FAMILY = Declaration(...)``, importing
# nothing but this module, so finding every family (``pushbench.tasks.declared``) stays cheap.

TARGET = 0  # Deliverable.count: the task's target N

# Tool roles the shared controllers steer by (``Declaration.roles``):
ROLES = {
    "paged-search": "a search(query, page) tool of an item set over env.search_index (tools/items.PagedSearch); "
                    "StateQGP's page memory and candidate buffer read it",
    "units": "a backlog of work units (tools/units.py) with list_units and status; the unitqgp controller "
             "steers it through the environment's read, change, checker and submit tools",
}


@dataclass(frozen=True)
class Deliverable:
    """What an episode must hand over (ACG App. C: its presence, not its correctness): at least
    ``count`` accepted calls of ``tools`` (``TARGET``: the task's N), or any accepted call of
    ``or_any`` (e.g. an edit in the repository). ``scoring.diagnostics`` judges it."""

    tools: tuple[str, ...]
    count: int = 1
    or_any: tuple[str, ...] = ()


@dataclass(frozen=True)
class MindSpec:
    """SimLM's mind for a family: ``target`` ("module:Class", a ``policies.sim.memory.Mind``) and the
    exact tool set of the tasks it reads (memory tools aside). SimLM takes the one mind whose set
    equals a task's tools, so sharing some tool names never hands a family another family's mind."""

    target: str
    tools: AbstractSet[str]  # kept as a frozenset

    def __post_init__(self) -> None:
        object.__setattr__(self, "tools", frozenset(self.tools))


@dataclass(frozen=True)
class Declaration:
    """Everything shared code needs to know about a family, declared in its own package.

    - ``family``: "module:Class", the ``TaskFamily`` (builder, environment, ``episode_metrics``);
    - ``mind``: SimLM's mind (``MindSpec``), or None: then sim/* models refuse its tasks;
    - ``deliverable``: what an episode must hand over, or None: then the deliverable diagnostics
      are not assessable (``None``);
    - ``roles``: which of ``ROLES`` its tools play (the controllers that need a role refuse a
      family without it);
    - ``summary``: its own metrics (keys of ``episode_metrics``) that ``summarize`` shows, as the
      mean per condition;
    - ``evidence``: "module:attr", the recall stage's evidence rule for its decisions
      (``replay.recall.evidence.EvidenceRule``), or None: the recall stage refuses its runs.
    """

    family: str
    mind: MindSpec | None = None
    deliverable: Deliverable | None = None
    roles: AbstractSet[str] = field(default_factory=frozenset)  # kept as a frozenset
    summary: tuple[str, ...] = ()
    evidence: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "roles", frozenset(self.roles))
        object.__setattr__(self, "summary", tuple(self.summary))
        unknown = sorted(self.roles - set(ROLES))
        if unknown:
            raise ValueError(f"unknown tool role {unknown[0]!r}; known: {', '.join(ROLES)}")
        if ":" not in self.family:
            raise ValueError(f"Declaration.family must be 'module:Class', got {self.family!r}")
