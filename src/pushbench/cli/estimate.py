"""``pushbench estimate`` (and ``--dry-run`` of ``run`` and ``experiment``): what a grid will cost
before it runs, labelled as an estimate (``pushbench.runner.estimate`` says how it is made)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer

from pushbench.cli.base import UserError, experiment_name, need_root, split, targets
from pushbench.cli.tables import FORMAT_OPTION, TableFormat, print_table
from pushbench.log.names import EPISODES


def print_estimate(grid: Any, prices_file: Optional[Path], options: dict[str, Any] | None = None,
                   out: Optional[Path] = None, like: Optional[str] = None,
                   fmt: TableFormat = TableFormat.auto) -> None:
    """Print the estimate of ``grid`` (less the episodes already in ``out``)."""
    import pandas as pd

    from pushbench.runner.estimate import estimate, family_model
    from pushbench.prices import PriceError, load_prices
    from pushbench.runner import check_grid, read_done

    tasks = check_grid(grid)
    try:
        prices = load_prices(prices_file)
        family_model(grid.family)
    except (PriceError, ValueError) as err:
        raise UserError(str(err)) from None
    if like is not None and not like.startswith("sim/"):
        raise UserError(f"--like takes a SimLM profile (sim/mini, sim/base, sim/pro, sim/perfect); got {like!r}")
    done = read_done(out / EPISODES) if out is not None else set()
    result = estimate(grid, tasks, prices, like=like, options=options, skip=done)
    table = pd.DataFrame([{"model": m.model, "episodes": m.episodes, "from_recorded_runs": m.recorded,
                           "llm_calls": round(m.llm_calls), "input_tokens": round(m.input_tokens),
                           "output_tokens": round(m.output_tokens),
                           "cost_usd": "" if m.cost_usd is None else f"{m.cost_usd:,.2f}"} for m in result.models])
    total = len(grid.episodes_of(tasks))
    typer.echo(f"ESTIMATE, not a measurement: {grid.family}, {total} episodes in the grid"
               + (f", {len(done)} already done in {out}" if done else "") + ".")
    print_table(table, fmt)
    modelled = sum(m.episodes - m.recorded for m in result.models)
    recorded = sum(m.recorded for m in result.models)
    basis = [f"{recorded} episode(s) from recorded SimLM episodes ({result.like} for API models) in "
             f"{', '.join(result.runs) or 'no run'}"] if recorded else []
    if modelled:
        basis.append(f"{modelled} from the per-family model (params.yaml estimate.families.{grid.family})")
    typer.echo("basis: " + "; ".join(basis) + ".")
    typer.echo(f"cost: {prices.label()}, input tokens before any provider prompt caching; empty: no price "
               "(--prices FILE). A real model's calls and tokens follow its own behaviour: read these as an "
               "order of magnitude.")


def estimate_cmd(experiment: Optional[str] = typer.Argument(None, help="An experiment of params.yaml (its grid); "
                                                            "else the grid of the options below, as for `run`."),
                 model: Optional[str] = typer.Option(None, help="Comma-separated models to estimate (default: the "
                                                     "experiment's, or sim/base)."),
                 family: str = typer.Option("reposcan", help="Task family (without an experiment)."),
                 controller: str = typer.Option("standard", help="Comma-separated controllers (without an experiment)."),
                 memory: str = typer.Option("full", help="Comma-separated memories (without an experiment)."),
                 target: Optional[str] = typer.Option(None, help="Only tasks with these targets (without an experiment)."),
                 seeds: int = typer.Option(1, help="Seeds per task and condition (without an experiment)."),
                 limit: Optional[int] = typer.Option(None, help="Only the first L tasks (without an experiment)."),
                 like: Optional[str] = typer.Option(None, help="The SimLM profile whose recorded episodes stand in "
                                                    "for API models (default: params.yaml estimate.like)."),
                 context_window: Optional[int] = typer.Option(None, min=1, help="The API model's context window "
                                                              "(caps each call's input in the family model)."),
                 prices: Optional[Path] = typer.Option(None, help="Price table (YAML or JSON); default params.yaml prices."),
                 fmt: TableFormat = FORMAT_OPTION) -> None:
    """Estimate a grid's model calls, input/output tokens and cost before running it."""
    need_root()
    from pushbench import config
    from pushbench.runner import Grid
    from pushbench.runner.experiment import experiment_grid

    if experiment is not None:
        experiment_name(experiment)
        grid = experiment_grid(experiment, split(model) or None)
    else:
        grid = Grid(family, split(controller), split(model) or ["sim/base"], split(memory), ["native"], seeds,
                    targets(target), limit, int(config.params("seed")))
    print_estimate(grid, prices, {"context_window": context_window}, like=like, fmt=fmt)
