"""Tables on the terminal and in pipes: a rich table on a terminal wide enough for it, plain
Markdown when stdout is not a terminal (or the terminal is too narrow), CSV on request.

Numbers are formatted the same way in every form (floats to 3 places), so ``pushbench summarize D
| cat`` and ``--format csv`` hold exactly the figures the rich table shows.
"""

from __future__ import annotations

import sys
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


def _fits(table: Any, width: int) -> bool:
    header, rows = _cells(table)
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows)]
    return sum(widths) + 3 * len(widths) + 1 <= width


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


def print_table(table: Any, fmt: TableFormat = TableFormat.auto) -> None:
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
        Console().print(view)
