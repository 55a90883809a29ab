"""Task families: one subpackage each (``tasks/<name>/``), registered in ``pushbench.registry``.

Nothing here imports a family: ``get_family(name)`` loads only the family asked for.
"""

from __future__ import annotations

from pathlib import Path

from pushbench import config
from pushbench.registry import FAMILIES
from pushbench.tasks.base import BuiltTask, TaskFamily, TaskSpec, read_manifest, write_manifest

_INSTANCES: dict[str, TaskFamily] = {}


def get_family(name: str) -> TaskFamily:
    """The family object registered as ``name`` (one per process)."""
    if name not in _INSTANCES:
        family = FAMILIES.make(name)
        family.name = name
        _INSTANCES[name] = family
    return _INSTANCES[name]


def manifest_path(family: str, root: Path | None = None) -> Path:
    return (root or config.MANIFESTS) / f"{family}.jsonl"


def load_tasks(family: str, root: Path | None = None) -> list[TaskSpec]:
    return read_manifest(manifest_path(family, root))


__all__ = ["FAMILIES", "BuiltTask", "TaskFamily", "TaskSpec", "get_family", "load_tasks", "manifest_path",
           "write_manifest"]
