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
    typer.echo(obs.text)
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
        progress: bool = typer.Option(True, help="Show a progress bar."),
        base_url: Optional[str] = typer.Option(None, help="OpenAI-compatible endpoint for openai/* models "
                                               "(default $OPENAI_BASE_URL, else OpenAI); key from $OPENAI_API_KEY."),
        request_timeout: float = typer.Option(60.0, help="Seconds per HTTP attempt of openai/* models."),
        concurrency: int = typer.Option(8, help="openai/* episodes in flight at once (async)."),
        cache: bool = typer.Option(True, help="Reuse cached model responses (keyed by the full request)."),
        cache_dir: Optional[Path] = typer.Option(None, help="Response cache folder (default data/cache/responses)."),
        executor: Optional[str] = typer.Option(None, help="local (worker processes) or ray (Ray tasks on $RAY_ADDRESS, "
                                               "else a local instance); default run.executor in params.yaml.")) -> None:
    """Run a grid of episodes; rerunning the same command resumes it."""
    from pushbench.runner import Grid, run_grid
    from pushbench.scoring import load_episodes, score_run, summarize

    if request_timeout <= 0 or concurrency < 1:
        raise typer.BadParameter("--request-timeout must be > 0 and --concurrency >= 1")
    grid = Grid(family, _split(controller), _split(model), _split(memory), _split(backend), seeds,
                [int(t) for t in _split(target)] if target else None, limit, int(config.params("seed")))
    options = {"base_url": base_url, "request_timeout": request_timeout, "cache": cache, "cache_dir": cache_dir}
    from pushbench.runner.ray_exec import RayExecutorError, check_executor, default_executor

    try:
        executor = check_executor(executor) if executor else default_executor()
    except ValueError as err:
        raise typer.BadParameter(str(err)) from None
    try:
        run_grid(grid, out, workers, progress, policy_options=options, concurrency=concurrency, executor=executor)
    except RayExecutorError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(1) from None
    _print_table(summarize(load_episodes(score_run(out))))


@app.command("score")
def score_cmd(run_dir: Path = typer.Argument(..., help="A run folder (episodes.jsonl and traces/)."),
              manifests: Optional[Path] = typer.Option(None, help="Manifest folder (default data/manifests).")) -> None:
    """(Re-)score a run from its traces: writes scored.jsonl and summary.json beside them."""
    from pushbench.scoring import ScoringError, load_episodes, score_run, summarize

    try:
        path = score_run(run_dir, manifests)
    except (ScoringError, FileNotFoundError) as err:
        raise typer.BadParameter(str(err)) from None
    _print_table(summarize(load_episodes(path)))


@app.command("serve-sim")
def serve_sim(host: str = typer.Option("127.0.0.1", help="Address to listen on."),
              port: int = typer.Option(8000, help="Port to listen on."),
              fault_rate: float = typer.Option(0.0, help="Fraction of attempts answered with a transport fault "
                                               "(429 with Retry-After, 500, or a stall), mixed."),
              malformed_rate: float = typer.Option(0.0, help="Fraction of requests answered with broken tool-call JSON."),
              fault_delay: float = typer.Option(5.0, help="Seconds a stall fault holds the request."),
              retry_after: float = typer.Option(1.0, help="Seconds a 429 asks the client to wait."),
              seed: int = typer.Option(0, help="Seed of the fault draws."),
              log_level: str = typer.Option("warning", help="uvicorn log level.")) -> None:
    """Serve SimLM as an OpenAI-compatible /v1/chat/completions endpoint (models sim-mini, sim-base, ...)."""
    from pushbench.serve_sim import ServeConfig, serve

    try:
        settings = ServeConfig(fault_rate, malformed_rate, fault_delay, retry_after, seed)
    except ValueError as err:
        raise typer.BadParameter(str(err)) from None
    typer.echo(f"serve-sim: SimLM (a simulator, not a real model) on http://{host}:{port}/v1", err=True)
    serve(host, port, settings, log_level)


@app.command("experiment")
def experiment(name: str = typer.Argument(..., help="A key under `experiments` in params.yaml."),
               workers: Optional[int] = typer.Option(None, help="Default: params run.workers."),
               progress: bool = typer.Option(True)) -> None:
    """Run one experiment of params.yaml and score it (the runs@NAME and score@NAME DVC stages)."""
    from pushbench.runner import run_experiment
    from pushbench.scoring import score_run

    path = score_run(run_experiment(name, workers, progress).parent)
    console.print(f"{name}: -> {os.path.relpath(path, config.ROOT)}")


@app.command("aggregate")
def aggregate_cmd() -> None:
    """Collect every experiment's episodes into data/results/episodes.jsonl."""
    from pushbench.aggregate import aggregate, configured_runs

    path = aggregate(configured_runs())
    console.print(f"aggregated -> {path.relative_to(config.ROOT)}")


@app.command("notebook")
def notebook_cmd(name: str = typer.Argument(..., help="notebooks/NAME.py (jupytext percent form).")) -> None:
    """Execute one notebook with papermill (kernel python3); figures go to paper_figures/NAME/."""
    from pushbench.notebooks import run_configured

    console.print(f"executed {name} -> {os.path.relpath(run_configured(name), config.ROOT)}")


@app.command("summarize")
def summarize_cmd(out: Path = typer.Argument(..., help="A run folder or episodes.jsonl."),
                  as_json: bool = typer.Option(False, "--json", help="Print JSON records."),
                  by: Optional[str] = typer.Option(None, help="Comma-separated grouping columns.")) -> None:
    """Per condition: success, valid count, duplicate rate, valid/step, failure rates."""
    from pushbench.scoring import load_episodes, summarize

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

from pushbench.memory.commands import memory_app  # noqa: E402  (memory recall, no model)

app.add_typer(memory_app, name="memory")


if __name__ == "__main__":
    app()
