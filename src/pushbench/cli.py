"""The ``pushbench`` command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from pushbench import config

app = typer.Typer(add_completion=False, no_args_is_help=True, help="PushBench: quantitative goal persistence.")
snapshots_app = typer.Typer(no_args_is_help=True, help="Pinned repository snapshots.")
manifests_app = typer.Typer(no_args_is_help=True, help="Task manifests and hidden answers.")
tools_app = typer.Typer(no_args_is_help=True, help="Try the agent-facing tools by hand.")
app.add_typer(snapshots_app, name="snapshots")
app.add_typer(manifests_app, name="manifests")
app.add_typer(tools_app, name="tools")
console = Console()


@snapshots_app.command("fetch")
def snapshots_fetch(only: Optional[list[str]] = typer.Option(None, "--only", help="Fetch just these."),
                    dest: Path = typer.Option(config.SNAPSHOT_SRC, help="Where trees are extracted.")) -> None:
    """Download the pinned sdists with pip, check sha256, extract atomically."""
    from pushbench.snapshots import SnapshotError, fetch_all

    try:
        trees = fetch_all(config.SNAPSHOT_LOCK, dest, only)
    except SnapshotError as err:
        console.print(f"[red]error:[/red] {err}")
        raise typer.Exit(1) from None
    for tree in trees:
        console.print(f"extracted {tree.name}")


@manifests_app.command("build")
def manifests_build(family: Optional[list[str]] = typer.Option(None, "--family", help="Only these families."),
                    out: Path = typer.Option(config.DATA, help="Data root: writes manifests/ and hidden/ here.")) -> None:
    """Build task manifests (agent-visible) and hidden answers (verifier-only)."""
    from pushbench.manifests import build_all

    for name, specs in build_all(family, out).items():
        console.print(f"{name}: {len(specs)} tasks -> {out / 'manifests' / (name + '.jsonl')}")


def _find_task(task_id: str):
    from pushbench.tasks import FAMILIES, load_tasks

    for name in FAMILIES:
        try:
            tasks = load_tasks(name)
        except FileNotFoundError:
            continue
        for task in tasks:
            if task.task_id == task_id:
                return task
    raise typer.BadParameter(f"no task {task_id!r} in the manifests")


@tools_app.command("try")
def tools_try(task: str = typer.Option(..., help="Task id."),
              call: str = typer.Option(..., help="`NAME {json args}`, e.g. 'search {\"query\": \"x\"}'")) -> None:
    """Run one tool call against a fresh episode and print what the agent would see."""
    from pushbench.tasks import get_family
    from pushbench.tools import ToolCall

    spec = _find_task(task)
    env = get_family(spec.family).environment(spec)
    name, _, args = call.strip().partition(" ")
    obs = env.execute(ToolCall(name, args.strip() or "{}"))
    console.print(obs.text, markup=False, highlight=False)
    if not obs.ok:
        raise typer.Exit(2)


@app.command("show-task")
def show_task(task: str) -> None:
    """Print a task's agent-visible manifest row."""
    console.print_json(json.dumps(_find_task(task).model_dump()))


if __name__ == "__main__":
    app()
