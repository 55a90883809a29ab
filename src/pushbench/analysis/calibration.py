"""Tables and the figure of the calibrate stage (notebook 00-calibration)."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from pushbench.figures import model_order

PANELS = ("10 docs", "20 docs", "30 docs", "length")


def load_points(folder: Path) -> pd.DataFrame:
    """Every published point beside the fitted curve and SimLM's probe (probe.json), one row each."""
    rows = json.loads((folder / "probe.json").read_text())["points"]
    table = pd.DataFrame(rows)
    table["published_model"] = table.pop("model")
    table["model"] = "sim/" + table.pop("profile")
    litm = table.source == "litm"
    table["panel"] = table.point.str.extract(r"^(\d+ docs)")[0].where(litm, "length")
    position = table.point.str.extract(r"position (\d+)$")[0]
    tokens = table.point.str.extract(r"^(\d+) tokens$")[0]
    table["x"] = position.where(litm, tokens).astype(int)
    return table


def fit_table(folder: Path) -> pd.DataFrame:
    """One row per profile: the model it is calibrated to, the fitted parameters, the fit errors."""
    fitted = json.loads((folder / "fitted.json").read_text())["profiles"]
    rows = [{"model": f"sim/{name}", "calibrated_to": entry["calibrated_to"], **entry["params"],
             "rmse": entry["rmse"], "rmse_litm": entry["rmse_by_source"]["litm"],
             "rmse_ruler": entry["rmse_by_source"]["ruler"], "probe_rmse": entry["probe_rmse"],
             "points": entry["points"]} for name, entry in fitted.items()]
    table = pd.DataFrame(rows)
    rank = {m: i for i, m in enumerate(model_order(list(table.model)))}
    return table.sort_values("model", key=lambda c: c.map(rank)).reset_index(drop=True)


def plot_calibration(points: pd.DataFrame) -> plt.Figure:
    """Rows: profiles; columns: Lost in the Middle at 10/20/30 documents (recall / oracle by answer
    position) and RULER (score / 4K score by length). Dots: published; line: fitted; crosses: SimLM's probe."""
    models = model_order(list(points.model))
    fig, axes = plt.subplots(len(models), len(PANELS), figsize=(11, 2.4 * len(models)), squeeze=False)
    for r, model in enumerate(models):
        for c, panel in enumerate(PANELS):
            ax = axes[r][c]
            cell = points[(points.model == model) & (points.panel == panel)].sort_values("x")
            if cell.empty:
                ax.set_visible(False)
                continue
            ax.plot(cell.x, cell.published, "o", color="#4c72b0", label="published")
            ax.plot(cell.x, cell.expected, "-", color="#dd8452", label="fitted curve")
            ax.plot(cell.x, cell.probe, "x", color="#55a868", label="SimLM probe")
            ax.set_ylim(0, 1.1)
            if panel == "length":
                ax.set_xscale("log", base=2)
                ax.set_xlabel("context tokens")
            else:
                ax.set_xlabel("answer position")
            ax.set_title(f"{model}: {panel} ({cell.published_model.iloc[0]})", fontsize=8)
            if c == 0:
                ax.set_ylabel("recall fraction")
    axes[0][0].legend(fontsize=7, loc="lower left")
    fig.suptitle("SimLM recall calibrated to published measurements (model: SimLM, not a real LLM)", fontsize=9)
    fig.tight_layout()
    return fig
