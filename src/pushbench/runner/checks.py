"""A grid is checked whole before a run writes anything: every name known, every target present.

Each problem is one line saying what was wrong and what is allowed (``GridError``), so a typo in
``--target`` or ``--controller`` never leaves an empty ``episodes.jsonl`` behind.
"""

from __future__ import annotations

from pathlib import Path

from pushbench import config
from pushbench.registry import BACKENDS, CONTROLLERS, FAMILIES, MEMORIES, PROVIDERS, Registry
from pushbench.runner.grid import Grid
from pushbench.tasks import declaration, load_tasks, manifest_path
from pushbench.tasks.base import ROLES, TaskSpec


class GridError(ValueError):
    """A grid that cannot run, with the reason and what is allowed."""


def _names(kind: str, option: str, names: list[str], registry: Registry) -> None:
    if not names:
        raise GridError(f"{option} names no {kind}; known: {', '.join(registry)}")
    unknown = [n for n in names if n not in registry]
    if unknown:
        raise GridError(f"unknown {kind} {', '.join(map(repr, unknown))} in {option}; known: {', '.join(registry)}")


def check_model(model: str) -> None:
    """``provider/name`` with a known provider; SimLM profiles are checked by name."""
    provider, _, name = model.partition("/")
    if provider not in PROVIDERS or not name:
        raise GridError(f"unknown model {model!r}; use sim/<profile>, openai/<model> or litellm/<provider>/<model> "
                        f"(known providers: {', '.join(PROVIDERS)})")
    if provider == "sim":
        from pushbench.policies.sim.profiles import PROFILES, split_window

        try:
            profile = split_window(name.removeprefix("sim-"))[0]
        except KeyError as err:
            raise GridError(str(err.args[0])) from None
        if profile not in PROFILES:
            raise GridError(f"unknown SimLM profile {model!r}; known: {', '.join('sim/' + p for p in PROFILES)} "
                            "(a context window may follow: sim/base@8k)")


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(config.ROOT))
    except ValueError:
        return str(path)


def check_grid(grid: Grid, manifest_root: Path | None = None) -> list[TaskSpec]:
    """The grid's tasks, or ``GridError`` naming the first problem."""
    if grid.family not in FAMILIES:
        raise GridError(f"unknown task family {grid.family!r}; known: {', '.join(FAMILIES)}")
    _names("controller", "--controller", grid.controllers, CONTROLLERS)
    declared = declaration(grid.family)
    for name in grid.controllers:
        missing = [role for role in CONTROLLERS.entry(name).meta.get("needs", ()) if role not in declared.roles]
        if missing:
            raise GridError(f"controller {name!r} needs a family whose tools play the role {missing[0]!r} "
                            f"({ROLES[missing[0]]}); {grid.family!r} declares "
                            f"{', '.join(sorted(declared.roles)) or 'no roles'}")
    _names("memory", "--memory", grid.memories, MEMORIES)
    _names("backend", "--backend", grid.backends, BACKENDS)
    if not grid.models:
        raise GridError("--model names no model; use sim/<profile>, openai/<model> or litellm/<provider>/<model>")
    for model in grid.models:
        check_model(model)
    sim = [m for m in grid.models if m.startswith("sim/")]
    if sim and declared.mind is None:
        raise GridError(f"SimLM has no mind for family {grid.family!r}, so {', '.join(sim)} cannot play it; "
                        "use openai/<model> for this family")
    if grid.seeds < 1:
        raise GridError(f"--seeds must be at least 1 (got {grid.seeds})")
    if grid.limit is not None and grid.limit < 1:
        raise GridError(f"--limit must be at least 1 (got {grid.limit})")
    path = manifest_path(grid.family, manifest_root)
    if not path.is_file():
        raise GridError(f"no manifest for family {grid.family!r} at {_shown(path)}; "
                        f"run `pushbench manifests build --family {grid.family}` first")
    every = load_tasks(grid.family, manifest_root)
    targets = sorted({t.target for t in every})
    missing = sorted(set(grid.targets or ()) - set(targets))
    if missing:
        raise GridError(f"no {grid.family} task has target {', '.join(map(str, missing))}; "
                        f"targets that exist: {', '.join(map(str, targets))}")
    try:
        tasks = grid.tasks(manifest_root)
    except ValueError as err:
        raise GridError(str(err)) from None
    if not tasks:
        from pushbench.runner.grid import task_split

        splits = sorted({task_split(t) for t in every})
        raise GridError(f"the grid selects no {grid.family} task; targets that exist: {', '.join(map(str, targets))}; "
                        f"splits: {', '.join(splits)}")
    return tasks
