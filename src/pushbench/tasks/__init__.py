"""Task families: one subpackage each (``tasks/<name>/``), which declares itself.

A family's ``__init__.py`` holds ``FAMILY = Declaration(...)`` (``tasks/base.py``: its class, SimLM
mind and tool set, deliverable, tool roles, the metrics ``summarize`` shows, its recall evidence
rule) and imports nothing else, so no shared module lists families. Found lazily, three ways:

- a subpackage of ``pushbench.tasks`` with a ``FAMILY``, under its folder's name (a look-up by name
  imports only that package; listing every family imports every package's ``__init__``);
- a package outside this one, through the ``pushbench.families`` entry-point group (the entry
  point's name is the family's, its value "module:attr" the declaration), so an installed plugin
  works in every process, the DVC stages included;
- ``register(name, declaration)`` at run time (a test, a notebook).

``get_family(name)`` loads only the family asked for; an unknown name raises
``registry.UnknownName`` listing the known ones.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import pkgutil
from pathlib import Path

from pushbench import config
from pushbench.registry import FAMILIES, MINDS, Entry
from pushbench.tasks.base import BuiltTask, Declaration, TaskFamily, TaskSpec, read_manifest, write_manifest

ENTRY_POINTS = "pushbench.families"

_INSTANCES: dict[str, TaskFamily] = {}
_DECLARED: dict[str, Declaration] = {}  # every declaration found so far
_REGISTERED: dict[str, Declaration] = {}  # by register(): win over found ones
_SCANNED = False
_MERGED: dict[str, Declaration] = {}  # {**_DECLARED, **_REGISTERED}, rebuilt when either changes


def _checked(name: str, found: object, where: str) -> Declaration:
    if not isinstance(found, Declaration):
        raise TypeError(f"{where}: FAMILY must be a pushbench.tasks.base.Declaration, not {type(found).__name__}")
    return found


def _in_package(name: str) -> Declaration | None:
    """The declaration of ``pushbench.tasks.<name>``, if that subpackage declares a family."""
    if not name.isidentifier():
        return None
    module = f"{__name__}.{name}"
    try:
        spec = importlib.util.find_spec(module)
    except ModuleNotFoundError:
        return None
    if spec is None or spec.submodule_search_locations is None:
        return None
    found = getattr(importlib.import_module(module), "FAMILY", None)
    return None if found is None else _checked(name, found, module)


def _entry_points(name: str | None = None) -> dict[str, Declaration]:
    points = importlib.metadata.entry_points(group=ENTRY_POINTS)
    return {p.name: _checked(p.name, p.load(), f"entry point {p.name} = {p.value}")
            for p in points if name is None or p.name == name}


def _scan() -> None:
    global _SCANNED
    if _SCANNED:
        return
    for info in pkgutil.iter_modules(__path__):
        if info.ispkg and info.name not in _DECLARED:
            found = _in_package(info.name)
            if found is not None:
                _DECLARED[info.name] = found
    for name, found in _entry_points().items():
        _DECLARED.setdefault(name, found)
    _SCANNED = True


def declared(name: str | None = None) -> dict[str, Declaration]:
    """Every family's declaration by name; given ``name``, at least that one if it exists (found
    without importing the others where possible). The same dict object until a declaration is added."""
    global _MERGED
    if name is not None and name not in _MERGED and not _SCANNED:
        found = _in_package(name) or _entry_points(name).get(name)
        if found is not None:
            _DECLARED[name] = found
    if not _SCANNED and (name is None or (name not in _REGISTERED and name not in _DECLARED)):
        _scan()
    if len(_MERGED) != len(_DECLARED.keys() | _REGISTERED.keys()) or any(
            _MERGED.get(n) is not d for n, d in _REGISTERED.items()):
        _MERGED = {**_DECLARED, **_REGISTERED}
    return _MERGED


def register(name: str, declaration: Declaration) -> None:
    """Declare a family at run time (one outside this package, e.g. in a test)."""
    _REGISTERED[name] = _checked(name, declaration, f"register({name!r})")
    _INSTANCES.pop(name, None)
    FAMILIES.forget(name)
    MINDS.forget(name)


def unregister(name: str) -> None:
    """Undo ``register(name, ...)``."""
    global _MERGED
    _REGISTERED.pop(name, None)
    _MERGED = {}
    _INSTANCES.pop(name, None)
    FAMILIES.forget(name)
    MINDS.forget(name)


def _family_entry(found: Declaration) -> Entry:
    return Entry(found.family, meta={"declaration": found})


def _mind_entry(found: Declaration) -> Entry | None:
    return None if found.mind is None else Entry(found.mind.target, meta={"tools": found.mind.tools})


_ENTRIES: dict[object, tuple[dict[str, Declaration], dict[str, Entry]]] = {}  # SimLM lists minds every turn


def _entries(make, name: str | None) -> dict[str, Entry]:
    families = declared(name)
    cached = _ENTRIES.get(make)
    if cached is None or cached[0] is not families:
        made = {n: make(d) for n, d in families.items()}
        cached = _ENTRIES[make] = (families, {n: e for n, e in made.items() if e is not None})
    return cached[1]


def family_entries(name: str | None = None) -> dict[str, Entry]:
    """``registry.FAMILIES``' entries: each family's class, with its declaration as metadata."""
    return _entries(_family_entry, name)


def mind_entries(name: str | None = None) -> dict[str, Entry]:
    """``registry.MINDS``' entries: the minds families declare, under the family's name."""
    return _entries(_mind_entry, name)


def declaration(name: str) -> Declaration:
    """The family's declaration (``UnknownName`` for an unknown family). A family added with
    ``FAMILIES.add`` alone declares nothing but its class."""
    entry = FAMILIES.entry(name)
    return entry.meta.get("declaration") or Declaration(entry.target)


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


__all__ = ["ENTRY_POINTS", "FAMILIES", "BuiltTask", "Declaration", "TaskFamily", "TaskSpec", "declaration", "declared",
           "family_entries", "get_family", "load_tasks", "manifest_path", "mind_entries", "register", "unregister",
           "write_manifest"]
