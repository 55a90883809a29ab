"""``run``, ``score``, ``summarize``, ``experiment``, ``aggregate``, ``notebook``: grids of episodes
and what is computed from them. An option is one parameter of the command function (typer)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Optional

import typer
from rich.console import Console

from pushbench import config
from pushbench.cli.base import UserError, experiment_name, need_root, split, targets
from pushbench.cli.estimate import print_estimate
from pushbench.cli.spend import MAX_COST, MAX_TOTAL_TOKENS, PRICES, finish, meter_for, show
from pushbench.cli.tables import FORMAT_OPTION, TableFormat
from pushbench.log.names import EPISODES, SCORED

console = Console()


def _split(value: str) -> str:
    from pushbench.runner.grid import SPLITS

    if value not in SPLITS:
        raise UserError(f"--split takes {' or '.join(SPLITS)}; got {value!r}")
    return value


def _models(models: list[str], window: int | None) -> list[str]:
    """SimLM profiles with ``--context-window`` become ``sim/P@N`` (the window is part of the condition)."""
    from pushbench.policies.sim.profiles import window_suffix

    if window is None:
        return models
    return [f"{m.partition('@')[0]}{window_suffix(window)}" if m.startswith("sim/") else m for m in models]


def _check_run_options(workers: int, request_timeout: float | None, concurrency: int) -> None:
    if workers < 1:
        raise UserError(f"--workers must be at least 1 (got {workers})")
    if request_timeout is not None and request_timeout <= 0:
        raise UserError(f"--request-timeout must be > 0 seconds (got {request_timeout})")
    if concurrency < 1:
        raise UserError(f"--concurrency must be at least 1 (got {concurrency})")


def run(family: str = typer.Option("reposcan", help="Task family."),
        controller: str = typer.Option("standard", help="Comma-separated controllers."),
        model: str = typer.Option("sim/base", help="Comma-separated models (provider/model)."),
        backend: str = typer.Option("native", help="Comma-separated backends."),
        memory: str = typer.Option("full", help="Comma-separated context builders."),
        target: Optional[str] = typer.Option(None, help="Only tasks with these targets N (comma-separated)."),
        seeds: int = typer.Option(1, help="Seeds per task and condition."),
        limit: Optional[int] = typer.Option(None, help="Only the first L tasks."),
        task: Optional[str] = typer.Option(None, help="Only these tasks (comma-separated ids, any split)."),
        task_split: str = typer.Option("short", "--split", help="The family's split: short, or long "
                                       "(the long-horizon tasks of planning, corpus and sweissues)."),
        workers: int = typer.Option(1, help="Parallel worker processes."),
        out: Path = typer.Option(..., help="Output folder (episodes.jsonl, traces/); one run at a time."),
        progress: bool = typer.Option(True, help="Show a progress bar."),
        base_url: Optional[str] = typer.Option(None, help="Endpoint of openai/* models (default $OPENAI_BASE_URL, "
                                               "else OpenAI; key from $OPENAI_API_KEY) or of litellm/* models."),
        request_timeout: Optional[float] = typer.Option(None, help="Seconds per HTTP attempt of openai/* "
                                                        "models (default: params chat.request_timeout, 60)."),
        max_tokens: Optional[int] = typer.Option(None, min=0, help="Reply tokens per openai/* call (default: params "
                                                 "chat.max_tokens, 1024; 0 sends no limit)."),
        context_window: Optional[int] = typer.Option(None, min=1, help="The model's context window in tokens: "
                                                     "sim/* profiles run as sim/P@N (oldest turns trimmed); openai/* "
                                                     "default 128k, or the sim-* profile's."),
        temperature: Optional[float] = typer.Option(None, min=0.0, max=2.0, help="Sampling temperature of openai/* "
                                                    "models (default: the server's)."),
        concurrency: int = typer.Option(8, help="API-model episodes in flight at once (threads)."),
        cache: bool = typer.Option(True, help="Reuse cached model responses (keyed by the full request)."),
        cache_dir: Optional[Path] = typer.Option(None, help="Response cache folder (default data/cache/responses)."),
        executor: Optional[str] = typer.Option(None, help="local (worker processes) or ray (Ray tasks on $RAY_ADDRESS, "
                                               "else a local instance); default run.executor in params.yaml."),
        max_cost: Optional[float] = MAX_COST, max_total_tokens: Optional[int] = MAX_TOTAL_TOKENS,
        prices: Optional[Path] = PRICES,
        dry_run: bool = typer.Option(False, "--dry-run", help="Print the estimate (`pushbench estimate`) and run nothing."),
        fmt: TableFormat = FORMAT_OPTION) -> None:
    """Run a grid of episodes; rerunning the same command resumes it."""
    need_root()
    from pushbench.runner import Grid

    _check_run_options(workers, request_timeout, concurrency)
    grid = Grid(family, split(controller), _models(split(model), context_window), split(memory), split(backend), seeds,
                targets(target), limit, int(config.params("seed")), _split(task_split),
                tuple(split(task)) if task else None)
    options = {"base_url": base_url, "request_timeout": request_timeout, "cache": cache, "cache_dir": cache_dir,
               "max_tokens": max_tokens, "context_window": context_window, "temperature": temperature}
    _chat_options(options)
    from pushbench.runner.ray_exec import check_executor, default_executor

    try:
        executor = check_executor(executor) if executor else default_executor()
    except ValueError as err:
        raise UserError(str(err)) from None
    if dry_run:
        print_estimate(grid, prices, options, out)
        return
    run_and_report(grid, out, options, max_cost, max_total_tokens, prices, fmt, workers=workers, progress=progress,
                   concurrency=concurrency, executor=executor)


def run_and_report(grid: Any, out: Path, options: dict[str, Any], max_cost: Optional[float],
                   max_total_tokens: Optional[int], prices: Optional[Path], fmt: TableFormat, **run: Any) -> None:
    """Check the grid and every API model's endpoint, run with the caps, then score and print the
    results and the usage (``run`` and ``experiment``)."""
    from pushbench.policies import is_api_model
    from pushbench.runner import RunIncomplete, check_grid, run_grid
    from pushbench.runner.ray_exec import RayExecutorError

    check_out(out)
    check_grid(grid)  # a bad grid is reported before the endpoints are asked
    meter = meter_for(grid.models, options, max_cost, max_total_tokens, prices)
    incomplete = None
    try:
        run_grid(grid, out, policy_options=options, meter=meter, **run)
    except RayExecutorError as err:
        raise UserError(str(err)) from None
    except RunIncomplete as stop:
        incomplete = stop
    note_other_episodes(out, grid)
    finish(out, meter, fmt, incomplete, api=any(is_api_model(m) for m in grid.models))


def check_out(out: Path) -> None:
    """A run folder of its own: never empty (``--out ""`` is the current folder) nor the project root."""
    if not str(out).strip() or out == Path(".") or out.resolve() == config.ROOT.resolve():
        raise UserError(f"--out must name a run folder of its own (got {str(out)!r}); e.g. --out data/runs/my-run")


def note_other_episodes(out: Path, grid: Any) -> None:
    """Say so when the folder holds episodes this grid did not ask for (an earlier run with another
    --limit, --task or grid): the summary below covers every episode of the folder."""
    path = out / EPISODES
    if not path.is_file():
        return
    wanted = {e.episode_id for e in grid.episodes()}
    held = {json.loads(line)["episode_id"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()}
    others = len(held - wanted)
    if others:
        typer.echo(f"note: {out} holds {len(held)} episodes, {others} of them not in this grid (an earlier run "
                   f"with other options); the summary covers all {len(held)}: use a new --out for this grid alone",
                   err=True)


def score_cmd(run_dir: Path = typer.Argument(..., help="A run folder (episodes.jsonl and traces/)."),
              manifests: Optional[Path] = typer.Option(None, help="Manifest folder (default data/manifests)."),
              fmt: TableFormat = FORMAT_OPTION) -> None:
    """(Re-)score a run from its traces: writes scored.jsonl and summary.json beside them."""
    if manifests is None:
        need_root()
    from pushbench.scoring import ScoringError, load_episodes, score_run

    before = _rows(run_dir / SCORED)
    try:
        path = score_run(run_dir, manifests)
    except ScoringError as err:
        raise UserError(str(err)) from None
    after = _rows(path)
    changed = sorted(k for k in after if k in before and before[k] != after[k])
    typer.echo(f"re-scored {len(after)} episodes of {run_dir} from their traces: " + (
        f"{len(changed)} rows changed, {len(after.keys() - before.keys())} new" if before else "no earlier scored.jsonl")
        + (f" (first: {changed[0]}: {', '.join(_differing(before[changed[0]], after[changed[0]]))})" if changed else ""),
        err=True)
    show(load_episodes(path), None, fmt)


def _rows(path: Path) -> dict[str, dict[str, Any]]:
    """A scored.jsonl's rows by episode id ({} if there is none)."""
    if not path.is_file():
        return {}
    rows = (json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    return {row["episode_id"]: row for row in rows}


def _differing(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    return sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))[:5]


def summarize_cmd(out: Path = typer.Argument(..., help="A run folder or episodes.jsonl."),
                  as_json: bool = typer.Option(False, "--json", help="Print JSON records."),
                  by: Optional[str] = typer.Option(None, help="Comma-separated grouping columns."),
                  fmt: TableFormat = FORMAT_OPTION) -> None:
    """Per condition: success, valid count, duplicate rate, valid/step, failure rates; then the
    usage (model calls, HTTP requests, cache hits, tokens, cost)."""
    from pushbench.scoring import summary_records

    episodes, columns = _summary(out, split(by) or None)
    try:
        if as_json:
            typer.echo(json.dumps(summary_records(episodes, columns), sort_keys=True, indent=1))
        else:
            show(episodes, columns, fmt)
    except ValueError as err:
        raise UserError(str(err)) from None


def _summary(path: Path, by: list[str] | None) -> tuple[Any, list[str] | None]:
    from pushbench.scoring import load_episodes

    try:
        episodes = load_episodes(path)
    except ValueError as err:
        raise UserError(f"cannot read episodes from {path}: {err}") from None
    unknown = sorted(set(by or ()) - set(episodes.columns))
    if unknown:
        raise UserError(f"unknown --by column {', '.join(unknown)}; columns: {', '.join(sorted(episodes.columns))}")
    if "success" not in episodes:
        raise UserError("these episodes hold raw facts only: score the run first (`pushbench score RUN_DIR`)")
    return episodes, by


def experiment(name: str = typer.Argument(..., help="A key under `experiments` in params.yaml."),
               workers: Optional[int] = typer.Option(None, min=1, help="Default: params run.workers."),
               progress: bool = typer.Option(True),
               model: Optional[str] = typer.Option(None, help="Comma-separated models in place of the experiment's "
                                                   "(e.g. openai/gpt-4o-mini); needs --out."),
               out: Optional[Path] = typer.Option(None, help="Output folder (default data/runs/NAME, the pipeline's; "
                                                  "required with --model)."),
               base_url: Optional[str] = typer.Option(None, help="Endpoint of openai/* models (as for `run`)."),
               request_timeout: Optional[float] = typer.Option(None, help="Seconds per HTTP attempt (as for `run`)."),
               max_tokens: Optional[int] = typer.Option(None, min=0, help="Reply tokens per call (as for `run`)."),
               context_window: Optional[int] = typer.Option(None, min=1, help="The API model's context window."),
               temperature: Optional[float] = typer.Option(None, min=0.0, max=2.0, help="Sampling temperature."),
               concurrency: Optional[int] = typer.Option(None, min=1, help="API episodes in flight (default: the "
                                                         "experiment's chat.concurrency, else 8)."),
               cache: bool = typer.Option(True, help="Reuse cached model responses."),
               cache_dir: Optional[Path] = typer.Option(None, help="Response cache folder."),
               max_cost: Optional[float] = MAX_COST, max_total_tokens: Optional[int] = MAX_TOTAL_TOKENS,
               prices: Optional[Path] = PRICES,
               dry_run: bool = typer.Option(False, "--dry-run", help="Print the estimate and run nothing."),
               fmt: TableFormat = FORMAT_OPTION) -> None:
    """Run one experiment of params.yaml and score it (the runs@NAME and score@NAME DVC stages), or
    the same grid on another model (--model, --out) without editing params.yaml."""
    need_root()
    from pushbench.runner.experiment import experiment_chat, experiment_grid, write_experiment_record
    from pushbench.runner.ray_exec import default_executor

    experiment_name(name)
    if model and out is None:
        raise UserError("--model runs the experiment's grid on another model: give its own --out folder "
                        "(data/runs/NAME is the pipeline's)")
    grid = experiment_grid(name, split(model) or None)
    chat, default_concurrency = experiment_chat(name)
    given = {"base_url": base_url, "request_timeout": request_timeout, "max_tokens": max_tokens,
             "context_window": context_window, "temperature": temperature, "cache_dir": cache_dir,
             **({} if cache else {"cache": False})}
    options = {**chat, **{k: v for k, v in given.items() if v is not None}}
    _chat_options(options)
    folder = out or config.RUNS / name
    if dry_run:
        print_estimate(grid, prices, options, folder)
        return
    if out is not None:
        write_experiment_record(folder, name, grid)
    run_and_report(grid, folder, options, max_cost, max_total_tokens, prices, fmt,
                   workers=workers or int(config.params("run.workers")), progress=progress,
                   concurrency=concurrency or default_concurrency, executor=default_executor(),
                   wall_time=out is not None)


def _chat_options(options: dict[str, Any]) -> None:
    from pushbench.policies.chat import resolve_options

    try:
        resolve_options(**options)
    except ValueError as err:
        raise UserError(str(err)) from None


def aggregate_cmd() -> None:
    """Collect every experiment's episodes into data/results/episodes.jsonl."""
    need_root()
    from pushbench.analysis.aggregate import aggregate, configured_runs

    path = aggregate(configured_runs())
    console.print(f"aggregated -> {path.relative_to(config.ROOT)}")


def notebook_cmd(name: str = typer.Argument(..., help="notebooks/NAME.py (jupytext percent form)."),
                 results: Optional[Path] = typer.Option(None, help="A results folder, or a run folder of "
                                                        "`pushbench experiment NAME --model M --out DIR` "
                                                        "(default: data/results, the pipeline's)."),
                 out: Optional[Path] = typer.Option(None, help="With --results: where the executed notebook and "
                                                    "its figures go (default: RESULTS/notebooks).")) -> None:
    """Execute one notebook with papermill (kernel python3); figures go to paper_figures/NAME/
    (with --results, to OUT/figures/NAME/)."""
    need_root()
    from pushbench.analysis.notebooks import run_configured, run_on

    source = config.ROOT / "notebooks" / f"{name}.py"
    if not source.is_file() or name != Path(name).name:
        known = sorted(p.stem for p in (config.ROOT / "notebooks").glob("*.py"))
        raise UserError(f"no notebook {name!r}; notebooks: {', '.join(known)}")
    if results is not None:
        if not results.is_dir():
            raise UserError(f"--results {results} is not a folder")
        console.print(f"executed {name} -> {run_on(name, results, out or results / 'notebooks')}")
        return
    console.print(f"executed {name} -> {os.path.relpath(run_configured(name), config.ROOT)}")
