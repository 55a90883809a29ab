"""What a run is made of: the grid of conditions and the episodes it expands to."""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from pathlib import Path

from pushbench.tasks import load_tasks
from pushbench.tasks.base import TaskSpec


@dataclass(frozen=True)
class EpisodeSpec:
    family: str
    task_id: str
    controller: str
    memory: str
    model: str
    backend: str
    seed: int

    @property
    def episode_id(self) -> str:
        return "|".join([self.task_id, self.controller, self.memory, self.model, self.backend, f"s{self.seed}"])

    def policy_seed(self, master: int) -> int:
        """Randomness shared by every controller/memory on the same task, model and seed (paired)."""
        return zlib.crc32(f"{master}:{self.task_id}:{self.model}:{self.seed}".encode())


@dataclass(frozen=True)
class Grid:
    family: str
    controllers: list[str]
    models: list[str]
    memories: list[str]
    backends: list[str]
    seeds: int
    targets: list[int] | None = None
    limit: int | None = None
    master_seed: int = 0

    def tasks(self, manifest_root: Path | None = None) -> list[TaskSpec]:
        tasks = [t for t in load_tasks(self.family, manifest_root)
                 if not self.targets or t.target in self.targets]
        return tasks[: self.limit] if self.limit else tasks

    def episodes(self, manifest_root: Path | None = None) -> list[EpisodeSpec]:
        return self.episodes_of(self.tasks(manifest_root))

    def episodes_of(self, tasks: list[TaskSpec]) -> list[EpisodeSpec]:
        return [EpisodeSpec(self.family, t.task_id, c, m, model, b, s)
                for t in tasks for c in self.controllers for m in self.memories
                for model in self.models for b in self.backends for s in range(self.seeds)]
