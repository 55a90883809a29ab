"""What a run is made of: the grid of conditions and the episodes it expands to."""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from pathlib import Path

from pushbench.tasks import load_tasks
from pushbench.tasks.base import TaskSpec, task_split


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
    split: str = "short"  # the family's split (long-horizon tasks say settings.split = "long")
    task_ids: tuple[str, ...] | None = None  # exactly these tasks (any split), in manifest order

    def tasks(self, manifest_root: Path | None = None) -> list[TaskSpec]:
        tasks = load_tasks(self.family, manifest_root)
        if self.task_ids is not None:
            tasks = picked(tasks, self.task_ids, self.family)
        else:
            tasks = [t for t in tasks if task_split(t) == self.split and (not self.targets or t.target in self.targets)]
        return tasks[: self.limit] if self.limit else tasks

    def episodes(self, manifest_root: Path | None = None) -> list[EpisodeSpec]:
        return self.episodes_of(self.tasks(manifest_root))

    def episodes_of(self, tasks: list[TaskSpec]) -> list[EpisodeSpec]:
        return [EpisodeSpec(self.family, t.task_id, c, m, model, b, s)
                for t in tasks for c in self.controllers for m in self.memories
                for model in self.models for b in self.backends for s in range(self.seeds)]


SPLITS = ("short", "long")


def picked(tasks: list[TaskSpec], task_ids: tuple[str, ...], family: str) -> list[TaskSpec]:
    """The tasks named by id, in manifest order; an unknown id is an error naming it."""
    known = {t.task_id for t in tasks}
    unknown = [t for t in task_ids if t not in known]
    if unknown:
        raise ValueError(f"no task {', '.join(unknown)} in the {family} manifest")
    wanted = set(task_ids)
    return [t for t in tasks if t.task_id in wanted]
