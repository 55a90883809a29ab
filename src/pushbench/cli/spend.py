"""What protects a researcher's money around ``run`` and ``experiment``: the price table and the
spend caps, the check of every API model's endpoint before the first call, and the usage printed
when a run ends (or stops at a cap)."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path
from typing import Any, Optional, cast

import typer

from pushbench import config
from pushbench.cli.base import UserError
from pushbench.cli.tables import LEGEND, TableFormat, print_table
from pushbench.log.names import EPISODES
from pushbench.policies.base import EndpointPolicy

MAX_COST = typer.Option(None, "--max-cost", min=0.0, help="Stop once this run's API calls cost this many US "
                        "dollars at list prices (--prices); a rerun goes on without paying again.")
MAX_TOTAL_TOKENS = typer.Option(None, "--max-total-tokens", min=1, help="Stop once this run's API calls used this "
                                "many input + output tokens; a rerun goes on without paying again.")
PRICES = typer.Option(None, "--prices", help="Price table (YAML or JSON, US dollars per million tokens: models: "
                      "{NAME: {input, output, cached_input}}); default: params.yaml prices.")
INCOMPLETE_EXIT = 3  # the run stopped before its grid was done (a cap, a failing endpoint)


def meter_for(models: list[str], options: dict[str, Any], max_cost: Optional[float],
              max_total_tokens: Optional[int], prices_file: Optional[Path]) -> Any:
    """The run's spend meter, after checking the caps can be kept and every API model's endpoint
    answers (before any progress bar): a problem is a ``UserError``."""
    from pushbench.policies import is_api_model
    from pushbench.policies.spend import Meter
    from pushbench.prices import PriceError, load_prices

    try:
        prices = load_prices(prices_file)
    except PriceError as err:
        raise UserError(str(err)) from None
    api = [m for m in models if is_api_model(m)]
    if max_cost is not None:
        unpriced = [m for m in api if prices.lookup(m) is None]
        if unpriced:
            raise UserError(f"--max-cost needs a price for {', '.join(unpriced)}: add it to params.yaml `prices` "
                            "or pass --prices FILE")
    for model in api:
        check_endpoint(model, options)
    return Meter(max_cost, max_total_tokens, prices)


def check_endpoint(model: str, options: dict[str, Any]) -> None:
    """Key present, endpoint reachable, model served (``UserError`` naming which is not)."""
    from pushbench.policies import make_policy

    try:
        policy = cast(EndpointPolicy, make_policy(model, **options))  # an API model (the caller's `api`)
        try:
            policy.check_endpoint()
        finally:
            policy.close()
    except ValueError as err:  # EndpointError, a bad option, a missing key
        raise UserError(str(err)) from None


def show(episodes: Any, by: list[str] | None, fmt: TableFormat, prices: Any = None) -> None:
    """The metrics per condition, then (rich and Markdown) the usage per condition; CSV gets one
    table holding both."""
    from pushbench.prices import load_prices
    from pushbench.scoring import CONDITION, summarize
    from pushbench.scoring.usage import usage_summary

    table = with_success_sd(summarize(episodes, by), episodes, by or CONDITION)
    usage = usage_summary(episodes, by or CONDITION)
    if fmt is TableFormat.csv:
        print_table(table if usage is None else table.merge(usage, on=by or CONDITION, how="left"), fmt)
        return
    print_table(table, fmt)
    typer.echo(textwrap.fill(LEGEND, 100))
    if usage is None:
        return
    typer.echo("")
    print_table(usage, fmt, constant_numbers=True)
    typer.echo(textwrap.fill(f"usage: llm_calls counts every model call, from the response cache too; requests are "
                             f"HTTP attempts; cost_usd is the episodes' tokens at {(prices or load_prices()).label()}, "
                             "empty where a model has no price", 100))


def with_success_sd(table: Any, episodes: Any, by: list[str]) -> Any:
    """``success_sd`` beside ``success_rate``: the standard error of the task-mean success (per-task
    means' SD over the square root of the task count; 0 for one task), what the notebooks' task
    bootstrap estimates."""
    tasks = episodes.task_id if "task_id" in episodes else episodes.index.to_series()  # else each row its own task
    per_task = episodes.assign(success=episodes.success.astype(float), _task=tasks).groupby([*by, "_task"]).success.mean()
    sd = per_task.groupby(level=list(range(len(by)))).agg(lambda s: float(s.std(ddof=1) / len(s) ** 0.5)
                                                         if len(s) > 1 else 0.0)
    table = table.merge(sd.rename("success_sd").round(4).reset_index(), on=by, how="left")
    order = list(table.columns)
    order.insert(order.index("success_rate") + 1, order.pop(order.index("success_sd")))
    return table[order]


def spent_line(meter: Any) -> str:
    spend = meter.spend
    cost = f"${spend.cost:,.4f}" + (f" (no price for {', '.join(spend.unpriced)})" if spend.unpriced else "")
    return (f"this run: {spend.requests:,} requests, {spend.cache_hits:,} cache hits, {spend.input_tokens:,} input "
            f"tokens ({spend.cached_tokens:,} from the provider's prompt cache), {spend.output_tokens:,} output "
            f"tokens, {cost} at list prices")


def finish(out: Path, meter: Any, fmt: TableFormat, incomplete: Any = None, api: bool = False) -> None:
    """Score what the run folder holds, print it and the usage; a run left incomplete ends with one
    ``stopped:`` line and exit code 3."""
    from pushbench.scoring import load_episodes, score_run

    if (out / EPISODES).is_file() and (out / EPISODES).stat().st_size:
        show(load_episodes(score_run(out, prices=meter.prices)), None, fmt, meter.prices)
    if api:
        typer.echo(spent_line(meter), err=True)
    if incomplete is not None:
        where = os.path.relpath(out / "incomplete.json", config.ROOT) if out.resolve().is_relative_to(config.ROOT) \
            else str(out / "incomplete.json")
        typer.echo(f"stopped: {incomplete.detail}; {len(incomplete.left)} episode(s) left unfinished (listed in "
                   f"{where}). Rerun the same command{' with a higher cap' if incomplete.reason.startswith('max_') else ''}"
                   " to finish them: finished episodes are kept, and calls already paid for come from the response cache "
                   "(unless --no-cache).",
                   err=True)
        raise typer.Exit(INCOMPLETE_EXIT)
