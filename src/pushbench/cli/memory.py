"""``pushbench memory ...``: commands about the memories themselves (no model involved)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import click
import typer

from pushbench.cli.base import UserError
from pushbench.cli.tables import FORMAT_OPTION, TableFormat, print_table

memory_app = typer.Typer(no_args_is_help=True, help="Measure the context builders (memories) without a model.")


@memory_app.command("recall")
def recall_cmd(run_dir: Path = typer.Argument(..., help="A run folder (episodes.jsonl and traces/)."),
               memory: str = typer.Option("full,memgpt,langgraph-store", help="Comma-separated memories."),
               budget: int = typer.Option(..., help="View budget in tokens, the same for every memory."),
               limit: Optional[int] = typer.Option(None, help="Only the first L episodes (by id)."),
               as_json: bool = typer.Option(False, "--json", help="Print JSON records instead of tables."),
               fmt: TableFormat = FORMAT_OPTION) -> None:
    """Evidence recall: per memory, the share of the evidence each recorded decision needed that its
    view holds when the run's traces are replayed at BUDGET tokens."""
    from pushbench.replay.recall import RecallError, recall_by_length, run_recall, summary

    names = [m.strip() for m in memory.split(",") if m.strip()]
    try:
        result = run_recall(run_dir, names, budget, limit=limit)
    except RecallError as err:
        raise UserError(str(err)) from None
    overall, by_length = summary(result), recall_by_length(result)
    if as_json:
        click.echo(json.dumps({"budget": budget, "episodes": result.episodes, "summary": _records(overall),
                               "by_length": _records(by_length)}, sort_keys=True, indent=1))
        return
    click.echo(f"evidence recall at {budget} tokens: {result.episodes} episodes replayed"
               + (f", {result.missing_traces} without a trace" if result.missing_traces else ""))
    print_table(overall, fmt)
    if len(by_length):
        shares = by_length.pivot(index="memory", columns="bucket", values="share")
        labels = sorted(dict.fromkeys(by_length["bucket"]), key=lambda b: int(b.split("-")[0].rstrip("+")))
        click.echo("share recalled by the decision's action number:")
        print_table(shares.reindex(index=names, columns=labels).reset_index(), fmt)


def _records(table) -> list[dict]:
    return json.loads(table.to_json(orient="records"))
