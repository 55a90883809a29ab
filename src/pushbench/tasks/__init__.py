"""Task families, registered by name. Adding one = a module, a line below, a params entry."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from pushbench import config
from pushbench.tasks.base import BuiltTask, TaskFamily, TaskSpec, read_manifest, write_manifest

FAMILIES: dict[str, TaskFamily] = {}


def register_family(name: str) -> Callable[[type], type]:
    def add(cls: type) -> type:
        cls.name = name
        FAMILIES[name] = cls()
        return cls
    return add


def get_family(name: str) -> TaskFamily:
    if name not in FAMILIES:
        raise KeyError(f"unknown task family {name!r}; known: {', '.join(sorted(FAMILIES))}")
    return FAMILIES[name]


def manifest_path(family: str, root: Path | None = None) -> Path:
    return (root or config.MANIFESTS) / f"{family}.jsonl"


def load_tasks(family: str, root: Path | None = None) -> list[TaskSpec]:
    return read_manifest(manifest_path(family, root))


from pushbench.tasks import reposcan  # noqa: E402,F401  (registration)
from pushbench.tasks import dataops  # noqa: E402,F401  (registration)
from pushbench.tasks import swe  # noqa: E402,F401  (registration; catalogue: tasks/swe_catalogue.json)
from pushbench.tasks import rows  # noqa: E402,F401  (registration; the worked example family)

__all__ = ["FAMILIES", "BuiltTask", "TaskSpec", "get_family", "load_tasks", "manifest_path",
           "register_family", "write_manifest"]
