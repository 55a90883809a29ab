"""Figure and table output with reproducible bytes: PNG + PDF without timestamps, CSV + Markdown.

Every figure title carries the model label; with SimLM it says so (``SIM_NOTE``).
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


def save_table(table: pd.DataFrame, out_dir: Path, name: str, caption: str, floatfmt: str = ".3f") -> list[Path]:
    """CSV + Markdown; rows with a ``model`` column go weakest profile first (order otherwise kept)."""
    if "model" in table.columns:
        rank = {m: i for i, m in enumerate(model_order(list(table.model)))}
        table = table.sort_values("model", key=lambda col: col.map(rank), kind="stable")
    out_dir.mkdir(parents=True, exist_ok=True)
    csv, md = out_dir / f"{name}.csv", out_dir / f"{name}.md"
    table.to_csv(csv, index=False, float_format="%.4f", lineterminator="\n")
    md.write_text(f"{caption}\n\n{table.to_markdown(index=False, floatfmt=floatfmt)}\n", encoding="utf-8")
    return [csv, md]
