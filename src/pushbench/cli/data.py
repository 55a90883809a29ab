"""``snapshots fetch``, ``manifests build``, ``tools try`` and ``show-task``: the data a run reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import typer
from rich.console import Console

from pushbench import config
from pushbench.cli.base import UserError, need_root

snapshots_app = typer.Typer(no_args_is_help=True, help="Pinned repository snapshots.")
manifests_app = typer.Typer(no_args_is_help=True, help="Task manifests and hidden answers.")
tools_app = typer.Typer(no_args_is_help=True, help="Try the agent-facing tools by hand.")
console = Console()


@snapshots_app.command("fetch")
def snapshots_fetch(only: Optional[list[str]] = typer.Option(None, "--only", help="Fetch just these."),
                    dest: Path = typer.Option(config.SNAPSHOT_SRC, help="Where trees are extracted.")) -> None:
    """Download the pinned sdists with pip, check sha256, extract atomically."""
    need_root()
    from pushbench.snapshots import SnapshotError, fetch_all

    try:
        trees = fetch_all(config.SNAPSHOT_LOCK, dest, only)
    except SnapshotError as err:
        raise UserError(str(err)) from None
    for tree in trees:
        console.print(f"extracted {tree.name}")


@manifests_app.command("build")
def manifests_build(family: Optional[list[str]] = typer.Option(None, "--family", help="Only these families."),
                    out: Path = typer.Option(config.DATA, help="Data root: writes manifests/ and hidden/ here.")) -> None:
    """Build task manifests (agent-visible) and hidden answers (verifier-only)."""
    need_root()
    from pushbench.tasks.manifests import build_all
    from pushbench.registry import FAMILIES
    from pushbench.snapshots import SnapshotError

    unknown = [f for f in family or () if f not in FAMILIES]
    if unknown:  # checked before any family is built, so nothing is half-written
        raise UserError(f"unknown task family {', '.join(map(repr, unknown))}; known: {', '.join(FAMILIES)}")
    try:
        built = build_all(family, out)
    except SnapshotError as err:
        raise UserError(str(err)) from None
    for name, specs in built.items():
        console.print(f"{name}: {len(specs)} tasks -> {out / 'manifests' / (name + '.jsonl')}")


def find_task(task_id: str) -> Any:
    """The manifest row of ``task_id`` in any family's manifest, or a ``UserError`` saying where to look."""
    need_root()
    from pushbench.tasks import FAMILIES, load_tasks

    families = []
    for name in FAMILIES:
        try:
            tasks = load_tasks(name)
        except FileNotFoundError:
            continue
        families.append(name)
        for task in tasks:
            if task.task_id == task_id:
                return task
    if not families:
        raise UserError(f"no manifests in {config.MANIFESTS}; run `pushbench manifests build` first")
    raise UserError(f"no task {task_id!r} in the manifests of {', '.join(families)}; "
                    "task ids look like reposcan-requests-fixture-n010 (see data/manifests/*.jsonl)")


@tools_app.command("try")
def tools_try(task: str = typer.Option(..., help="Task id."),
              call: str = typer.Option(..., help="`NAME {json args}`, e.g. 'search {\"query\": \"x\"}'")) -> None:
    """Run one tool call against a fresh episode and print what the agent would see (exit 2 if refused)."""
    from pushbench.tasks import get_family
    from pushbench.tools import ToolCall

    spec = find_task(task)
    env = get_family(spec.family).environment(spec)
    name, _, args = call.strip().partition(" ")
    obs = env.execute(ToolCall(name, args.strip() or "{}"))
    typer.echo(obs.text)
    if not obs.ok:
        raise typer.Exit(2)


def show_task(task: str = typer.Argument(..., help="Task id.")) -> None:
    """Print a task's agent-visible manifest row."""
    typer.echo(json.dumps(find_task(task).model_dump(), sort_keys=True, indent=2))
