"""Tables on the terminal and in pipes: a rich table on a terminal wide enough for it, plain
Markdown when stdout is not a terminal (or the terminal is too narrow), CSV on request.

Numbers are formatted the same way in every form (floats to 3 places), so ``pushbench summarize D
| cat`` and ``--format csv`` hold exactly the figures the rich table shows.
"""

from __future__ import annotations

import sys
import textwrap
from enum import Enum
from typing import Any

import click
import typer


class TableFormat(str, Enum):
    auto = "auto"
    rich = "rich"
    markdown = "markdown"
    csv = "csv"


FORMAT_OPTION = typer.Option(TableFormat.auto, "--format", case_sensitive=False,
                             help="Table form: auto (rich on a wide terminal, else Markdown), rich, markdown or csv.")


def _cell(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def _cells(table: Any) -> tuple[list[str], list[list[str]]]:
    return [str(c) for c in table.columns], [[_cell(v) for v in row] for row in table.itertuples(index=False)]


def markdown(table: Any) -> str:
    escaped = table.map(lambda v: v.replace("|", "\\|") if isinstance(v, str) else v)  # a "|" would split a cell
    return escaped.to_markdown(index=False, floatfmt=".3f") + "\n"  # tabulate's GitHub pipe table


def _width(table: Any) -> int:
    """The characters a rich table of ``table`` needs (cells, padding and rules)."""
    header, rows = _cells(table)
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows)]
    return sum(widths) + 3 * len(widths) + 1


def _fits(table: Any, width: int) -> bool:
    return _width(table) <= width


def resolve(fmt: TableFormat, table: Any, terminal: bool | None = None, width: int | None = None) -> TableFormat:
    """``auto``: rich on a terminal wide enough for the table, else Markdown (``terminal`` and
    ``width`` default to stdout's)."""
    if fmt is not TableFormat.auto:
        return fmt
    if terminal is None or width is None:
        from rich.console import Console

        console = Console()
        terminal = sys.stdout.isatty() and console.is_terminal if terminal is None else terminal
        width = console.width if width is None else width
    return TableFormat.rich if terminal and _fits(table, width) else TableFormat.markdown


# Shorter headers on the terminal and in Markdown, and the columns left to CSV (every column, full names)
SHORT = {"episodes": "n", "success_rate": "success", "success_sd": "sd", "mean_valid": "valid",
         "duplicate_rate": "dup", "false_completion": "false_end", "premature_stop": "early", "mean_steps": "steps",
         "input_tokens": "in_tokens", "output_tokens": "out_tokens", "cached_tokens": "cached",
         "repeated_searches": "repeats"}
CSV_ONLY = ("valid_per_step",)  # derived from valid and steps
LEGEND = ("n episodes · sd task-level standard error of success · valid mean accepted items · dup duplicate-submit "
          "rate · false_end final before the target · early stopped before the target · repeats repeated searches; "
          "--format csv: every column under its full name")


def compact(table: Any, numbers: bool = False) -> tuple[Any, str]:
    """The table without the columns that hold one value in every row (said once in a caption
    line instead; numeric ones too if ``numbers``), under the short headers of ``SHORT``: what the
    terminal shows (issue 34)."""
    table = table.drop(columns=[c for c in CSV_ONLY if c in table])
    if len(table) < 2:
        return table.rename(columns=SHORT), ""
    constant = [c for c in table.columns if table[c].astype(str).nunique() == 1
                and (numbers or table[c].dtype.kind not in "fi")]
    caption = " · ".join(f"{c} {table[c].iloc[0]}" for c in constant)
    return table.drop(columns=constant).rename(columns=SHORT), (f"all rows: {caption}" if caption else "")


def print_table(table: Any, fmt: TableFormat = TableFormat.auto, constant_numbers: bool = False) -> None:
    if fmt is not TableFormat.csv:
        table, caption = compact(table, constant_numbers)
        if caption:
            click.echo(textwrap.fill(caption, 100, subsequent_indent="  "))
    chosen = resolve(fmt, table)
    if chosen is TableFormat.csv:
        click.echo(table.to_csv(index=False, float_format="%.3f"), nl=False)
    elif chosen is TableFormat.markdown:
        click.echo(markdown(table), nl=False)
    else:
        from rich.console import Console
        from rich.table import Table

        view = Table(show_lines=False)
        for column in table.columns:
            view.add_column(str(column), justify="right" if table[column].dtype.kind in "fi" else "left")
        for row in _cells(table)[1]:
            view.add_row(*row)
        console = Console()
        console.width = max(console.width, _width(table))  # never cut a cell (a narrow terminal wraps lines)
        console.print(view)
