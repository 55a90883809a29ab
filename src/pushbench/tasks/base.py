"""The task contract: an agent-visible spec, hidden answers, and a family that builds and runs them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

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

    ``name`` is its registry name; ``mind`` names SimLM's mind for its tools (``registry.MINDS``),
    or None. ``episode_metrics`` is the family's scoring hook: its own metrics from the verifier
    events of one episode (``pushbench.scoring`` adds the common ones).
    """

    name: str
    mind: str | None

    def build(self, params: dict[str, Any], snapshot_root: Path | None = None) -> list[BuiltTask]: ...

    def environment(self, task: TaskSpec, snapshot_root: Path | None = None, hidden_root: Path | None = None,
                    sink: Any = None) -> "Environment": ...

    def episode_metrics(self, events: list[dict[str, Any]], task: TaskSpec) -> dict[str, Any]: ...


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
