"""Tables stay readable in a pipe and a narrow terminal: Markdown or CSV, rich only when it fits."""

from __future__ import annotations

import io

import pandas as pd
import pytest
from typer.testing import CliRunner

from pushbench.cli import app
from pushbench.cli.tables import TableFormat, markdown, resolve

TABLE = pd.DataFrame({"controller": ["standard", "state|qgp"], "episodes": [4, 4], "success_rate": [0.25, 1 / 3]})


def test_markdown_is_a_pipe_table_with_the_same_figures() -> None:
    assert markdown(TABLE).splitlines() == [
        "| controller   |   episodes |   success_rate |",
        "|:-------------|-----------:|---------------:|",
        "| standard     |          4 |          0.250 |",
        "| state\\|qgp   |          4 |          0.333 |",
    ]


@pytest.mark.parametrize(("terminal", "width", "expected"), [
    (False, 200, TableFormat.markdown),  # a pipe
    (True, 200, TableFormat.rich),  # a wide terminal
    (True, 30, TableFormat.markdown),  # too narrow: rich would wrap every cell
])
def test_auto_picks_rich_only_on_a_terminal_wide_enough(terminal: bool, width: int, expected: TableFormat) -> None:
    assert resolve(TableFormat.auto, TABLE, terminal=terminal, width=width) is expected
    assert resolve(TableFormat.csv, TABLE, terminal=terminal, width=width) is TableFormat.csv


def _scored(tmp_path):
    path = tmp_path / "scored.jsonl"
    rows = [{"family": "reposcan", "model": "sim/mini", "backend": "native", "memory": "full", "controller": c,
             "success": s, "valid_count": 10, "duplicate_submit_rate": 0.0, "valid_per_step": 0.5,
             "false_completion": False, "premature_stop": False, "repeated_searches": 0, "steps": 20}
            for c, s in [("standard", False), ("standard", True), ("stateqgp", True)]]
    pd.DataFrame(rows).to_json(path, orient="records", lines=True)
    return path


@pytest.mark.parametrize("fmt", ["auto", "markdown", "csv", "rich"])
def test_summarize_in_a_pipe(tmp_path, fmt: str) -> None:
    result = CliRunner().invoke(app, ["summarize", str(_scored(tmp_path)), "--format", fmt])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    if fmt in ("auto", "markdown"):  # CliRunner's stdout is not a terminal
        # columns with one value in every row go to a caption line; short headers; a legend after the table
        assert lines[0] == "all rows: family reposcan · model sim/mini · backend native · memory full"
        assert lines[1].startswith("| controller ") and "| success |" in lines[1].replace("   ", " ").replace("  ", " ")
        assert lines[2].startswith("|:--") and "| stateqgp " in lines[4] and "1.000" in lines[4]
        assert lines[5].startswith("n episodes · sd ")  # (a pipe gets Markdown: its width is not the terminal's)
    elif fmt == "csv":
        table = pd.read_csv(io.StringIO(result.output))
        assert list(table["controller"]) == ["standard", "stateqgp"] and list(table["success_rate"]) == [0.5, 1.0]
    else:
        assert "┏" in result.output and max(map(len, lines)) <= 100


def test_the_terminal_view_moves_constant_columns_to_a_caption() -> None:
    from pushbench.cli.tables import compact

    table = pd.DataFrame({"family": ["a", "a"], "model": ["x", "y"], "success_rate": [0.5, 0.5], "valid_per_step": [1, 2]})
    shown, caption = compact(table)
    assert caption == "all rows: family a" and list(shown.columns) == ["model", "success"]
    assert compact(table, numbers=True)[1] == "all rows: family a · success_rate 0.5"
    assert compact(table.iloc[:1])[1] == ""  # one row: nothing is "constant"
