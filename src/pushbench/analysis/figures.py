"""Figure and table output with reproducible bytes: PNG + PDF without timestamps, CSV + Markdown.

Every figure title carries the model label; with SimLM it says so (``SIM_NOTE``). Notebooks show
what they save with ``show_figure`` (the saved PNG itself, inline) and ``show_table`` (rows
weakest profile first, floats as in the Markdown file); both display the same bytes on every run.
"""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

SIM_NOTE = "model: SimLM (behavioural simulator), not a real LLM"
CONTROLLER_COLORS = {
    "standard": "#8c8c8c", "gated": "#4c72b0", "stateqgp": "#dd8452", "unitqgp": "#55a868",
    "stateqgp-dedupe": "#c7b3e6", "stateqgp-pages": "#9d79d6", "stateqgp-nobuffer": "#6a3fb5",
}


PROFILE_RANK = {"sim/mini": 0, "sim/base": 1, "sim/pro": 2, "sim/perfect": 3}


def model_order(models: list[str]) -> list[str]:
    """SimLM profiles from weakest to the perfect bound, then any other model by name."""
    return sorted(set(models), key=lambda m: (PROFILE_RANK.get(m, len(PROFILE_RANK)), m))


def style() -> None:
    os.environ.setdefault("SOURCE_DATE_EPOCH", "0")
    plt.rcParams.update({"figure.dpi": 110, "savefig.dpi": 110, "font.size": 9, "axes.spines.top": False,
                         "axes.spines.right": False, "pdf.fonttype": 42, "svg.hashsalt": "pushbench"})


def label_models(models: list[str]) -> str:
    sim = all(str(m).startswith("sim/") for m in models)
    return SIM_NOTE if sim else "models: " + ", ".join(sorted(set(map(str, models))))


def save_figure(fig: plt.Figure, out_dir: Path, name: str) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    png, pdf = out_dir / f"{name}.png", out_dir / f"{name}.pdf"
    fig.savefig(png, metadata={"Software": None}, bbox_inches="tight")
    fig.savefig(pdf, metadata={"CreationDate": None, "ModDate": None, "Producer": None, "Creator": None},
                bbox_inches="tight")
    plt.close(fig)
    return [png, pdf]


def order_rows(table: pd.DataFrame) -> pd.DataFrame:
    """Rows with a ``model`` column weakest profile first; the order within a model is kept."""
    if "model" not in table.columns:
        return table
    rank = {m: i for i, m in enumerate(model_order(list(table.model)))}
    return table.sort_values("model", key=lambda col: col.map(rank), kind="stable")


def save_table(table: pd.DataFrame, out_dir: Path, name: str, caption: str, floatfmt: str = ".3f") -> list[Path]:
    """CSV + Markdown; rows with a ``model`` column go weakest profile first (order otherwise kept)."""
    table = order_rows(table)
    if "flag" in table.columns:  # ceiling/floor flags (analysis/flags.py): the caption counts them
        from pushbench.analysis.flags import caption as flag_caption

        caption += flag_caption(table)
    out_dir.mkdir(parents=True, exist_ok=True)
    csv, md = out_dir / f"{name}.csv", out_dir / f"{name}.md"
    table.to_csv(csv, index=False, float_format="%.4f", lineterminator="\n")
    shown = table.astype(object).where(table.notna(), None) if table.isna().any().any() else table
    body = shown.to_markdown(index=False, floatfmt=floatfmt, missingval="–")  # as the notebook shows no value
    md.write_text(f"{caption}\n\n{body}\n", encoding="utf-8")
    return [csv, md]


class TableView:
    """A table as a notebook shows it: rows weakest profile first, no index, floats as ``floatfmt``."""

    def __init__(self, table: pd.DataFrame, floatfmt: str = ".3f") -> None:
        self.table = order_rows(table).reset_index(drop=True)
        self.floatfmt = floatfmt

    def _format(self, value: float) -> str:
        return format(value, self.floatfmt)

    def _repr_html_(self) -> str:
        return self.table.to_html(index=False, float_format=self._format, na_rep="–")

    def __repr__(self) -> str:
        return self.table.to_string(index=False, float_format=self._format, na_rep="–")


def show_table(table: pd.DataFrame, floatfmt: str = ".3f") -> TableView:
    """For a notebook cell's last line: the table formatted for reading (display only; the files
    written by ``save_table`` are unaffected)."""
    return TableView(table, floatfmt)


class FigureView:
    """A saved figure shown inline as its PNG file's bytes, so the notebook shows the paper figure."""

    def __init__(self, paths: list[Path]) -> None:
        self.paths = paths

    def _repr_png_(self) -> bytes:
        return self.paths[0].read_bytes()

    def __repr__(self) -> str:  # no memory address: the executed notebook has the same bytes every run
        return " + ".join(p.name for p in self.paths)


def show_figure(fig: plt.Figure, out_dir: Path, name: str) -> FigureView:
    """``save_figure`` (PNG + PDF), then show the saved PNG inline (a notebook cell's last line)."""
    return FigureView(save_figure(fig, out_dir, name))
