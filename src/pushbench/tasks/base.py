"""The task contract: an agent-visible spec, hidden answers, and a family that builds and runs them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict


class TaskSpec(BaseModel):
    """One task instance as the agent may see it (a row of ``data/manifests/<family>.jsonl``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    task_id: str
    family: str
    repo: str
    predicate: str
    objective: str
    target: int
    budget: int
    tools: list[str]
    oracle_steps: int
    settings: dict[str, Any] = {}


class BuiltTask(BaseModel):
    spec: TaskSpec
    hidden: dict[str, Any]


class TaskFamily(Protocol):
    """A family builds its tasks from params and makes a fresh environment for one episode."""

    name: str

    def build(self, params: dict[str, Any]) -> list[BuiltTask]: ...

    def environment(self, task: TaskSpec, **kwargs: Any) -> Any: ...


def write_manifest(path: Path, tasks: list[TaskSpec]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [json.dumps(t.model_dump(), sort_keys=True) for t in sorted(tasks, key=lambda t: t.task_id)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


def read_manifest(path: Path) -> list[TaskSpec]:
    if not path.is_file():
        raise FileNotFoundError(f"no manifest at {path}; run `pushbench manifests build`")
    return [TaskSpec.model_validate_json(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
