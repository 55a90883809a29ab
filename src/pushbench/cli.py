"""The ``pushbench`` command line."""

from __future__ import annotations

import json
import os
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


def _split(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


@app.command("run")
def run(family: str = typer.Option("reposcan", help="Task family."),
        controller: str = typer.Option("standard", help="Comma-separated controllers."),
        model: str = typer.Option("sim/base", help="Comma-separated models (provider/model)."),
        backend: str = typer.Option("native", help="Comma-separated backends."),
        memory: str = typer.Option("full", help="Comma-separated context builders."),
        target: Optional[str] = typer.Option(None, help="Only tasks with these targets N (comma-separated)."),
        seeds: int = typer.Option(1, help="Seeds per task and condition."),
        limit: Optional[int] = typer.Option(None, help="Only the first L tasks."),
        workers: int = typer.Option(1, help="Parallel worker processes."),
        out: Path = typer.Option(..., help="Output folder (episodes.jsonl, traces/)."),
        progress: bool = typer.Option(True, help="Show a progress bar.")) -> None:
    """Run a grid of episodes; rerunning the same command resumes it."""
    from pushbench.metrics import load_episodes, summarize
    from pushbench.runner import Grid, run_grid

    grid = Grid(family, _split(controller), _split(model), _split(memory), _split(backend), seeds,
                [int(t) for t in _split(target)] if target else None, limit, int(config.params("seed")))
    path = run_grid(grid, out, workers, progress)
    _print_table(summarize(load_episodes(path)))


@app.command("experiment")
def experiment(name: str = typer.Argument(..., help="A key under `experiments` in params.yaml."),
               out: Optional[Path] = typer.Option(None, help="Default: data/runs/NAME."),
               workers: Optional[int] = typer.Option(None, help="Default: params run.workers."),
               progress: bool = typer.Option(True)) -> None:
    """Run one experiment of params.yaml and write its summary metrics (a DVC stage)."""
    from pushbench.metrics import load_episodes, summarize
    from pushbench.runner import Grid, run_grid

    spec = config.params(f"experiments.{name}")
    out = out or config.RUNS / name
    grid = Grid(spec["family"], spec["controllers"], spec["models"], spec["memories"], spec["backends"],
                int(spec["seeds"]), spec.get("targets"), spec.get("limit"), int(config.params("seed")))
    path = run_grid(grid, out, workers or int(config.params("run.workers")), progress)
    table = summarize(load_episodes(path))
    (out / "summary.json").write_text(json.dumps(table.to_dict(orient="records"), sort_keys=True, indent=1) + "\n")
    console.print(f"{name}: {len(load_episodes(path))} episodes -> {path.relative_to(out.parent.parent) if out.is_relative_to(config.DATA) else path}")


@app.command("aggregate")
def aggregate_cmd() -> None:
    """Collect every experiment's episodes into data/results/episodes.jsonl."""
    from pushbench.aggregate import aggregate

    path = aggregate(sorted(config.params("experiments")))
    console.print(f"aggregated -> {path.relative_to(config.ROOT)}")


@app.command("notebook")
def notebook_cmd(name: str = typer.Argument(..., help="notebooks/NAME.py (jupytext percent form)."),
                 figures: Path = typer.Option(config.FIGURES, help="Where figures and tables go."),
                 results: Path = typer.Option(config.RESULTS, help="Aggregated results folder.")) -> None:
    """Execute one notebook with papermill (kernel python3); figures go to paper_figures/."""
    from pushbench.notebooks import execute

    rel = lambda p: os.path.relpath(p, config.ROOT)  # noqa: E731 (no absolute paths in outputs)
    params = {"results": rel(results), "figures": rel(figures / name),
              "n_resamples": int(config.params("stats.n_resamples")), "seed": int(config.params("seed"))}
    out = execute(name, params)
    console.print(f"executed {name} -> {out.relative_to(config.ROOT) if out.is_relative_to(config.ROOT) else out}")


@app.command("summarize")
def summarize_cmd(out: Path = typer.Argument(..., help="A run folder or episodes.jsonl."),
                  as_json: bool = typer.Option(False, "--json", help="Print JSON records."),
                  by: Optional[str] = typer.Option(None, help="Comma-separated grouping columns.")) -> None:
    """Per condition: success, valid count, duplicate rate, valid/step, failure rates."""
    from pushbench.metrics import load_episodes, summarize

    table = summarize(load_episodes(out), _split(by) if by else None)
    if as_json:
        typer.echo(json.dumps(table.to_dict(orient="records"), sort_keys=True, indent=1))
    else:
        _print_table(table)


def _print_table(table) -> None:
    from rich.table import Table

    view = Table(show_lines=False)
    for column in table.columns:
        view.add_column(str(column), justify="right" if table[column].dtype.kind in "fi" else "left")
    for row in table.itertuples(index=False):
        view.add_row(*(f"{v:.3f}" if isinstance(v, float) else str(v) for v in row))
    console.print(view)


@app.command("show-task")
def show_task(task: str) -> None:
    """Print a task's agent-visible manifest row."""
    console.print_json(json.dumps(_find_task(task).model_dump()))


from pushbench.harness.commands import agent_app, serve_mcp  # noqa: E402  (black-box agents, MCP)

app.command("serve-mcp")(serve_mcp)
app.add_typer(agent_app, name="agent")


if __name__ == "__main__":
    app()
