"""Figures 2 and 3 of the ACG evaluation (``analysis.acg_eval``'s tables in, a figure out): one
panel per family (columns) and model (rows), one colour per method."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from pushbench.analysis.acg import METHOD_COLORS, METHODS
from pushbench.analysis.acg_eval import FAMILIES, MIN_SEGMENT_TASKS
from pushbench.analysis.figures import label_models, model_order


def _grid(table: pd.DataFrame, width: float, height: float) -> tuple[plt.Figure, np.ndarray, list[str], list[str]]:
    families = [f for f in FAMILIES if f in set(table.family)]
    models = model_order(list(table.model))
    fig, axes = plt.subplots(max(1, len(models)), max(1, len(families)), figsize=(width * max(1, len(families)),
                             height * max(1, len(models))), sharey=True, squeeze=False)
    if not families:
        _say(axes[0][0], "no episodes of " + ", ".join(FAMILIES))
    return fig, axes, families, models


def _say(ax: plt.Axes, text: str) -> None:
    """A panel with nothing to draw says why, instead of showing empty axes."""
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", fontsize=7, color="#555555")


def _finish(fig: plt.Figure, axes: np.ndarray, models: list[str], ylabel: str, title: str) -> plt.Figure:
    for ax, model in zip(axes[:, 0], models):
        ax.set_ylabel(f"{model}\n{ylabel}", fontsize=8)
    handles, labels = axes[0][0].get_legend_handles_labels()
    for ax in axes.flat:
        ax.set_ylim(0, 1.05)
        if not handles:
            handles, labels = ax.get_legend_handles_labels()
    if handles:
        axes[0][-1].legend(handles, labels, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return fig


def plot_structure(table: pd.DataFrame) -> plt.Figure:
    """Fig. 2: success per structural group (x), one marker series per method, 95% intervals."""
    fig, axes, families, models = _grid(table, 3.6, 2.5)
    for j, family in enumerate(families):
        groups = sorted(set(table[table.family == family].structure))
        for i, model in enumerate(models):
            ax = axes[i][j]
            part = table[(table.family == family) & (table.model == model)]
            shown = [m for m in METHODS if m in set(part.memory)]
            if not shown:
                _say(ax, "not run")
            for k, memory in enumerate(shown):
                rows = part[part.memory == memory].set_index("structure").reindex(groups)
                x = np.arange(len(groups)) + (k - (len(shown) - 1) / 2) * 0.12
                err = np.vstack([rows.success - rows.ci_low, rows.ci_high - rows.success])
                ax.errorbar(x, rows.success, yerr=err, fmt="o", ms=3, capsize=2, lw=0.8,
                            color=METHOD_COLORS[memory], label=memory)
            ax.set_xticks(np.arange(len(groups)), groups, fontsize=7, rotation=30 if len(groups) > 3 else 0)
            if i == 0:
                ax.set_title(family, fontsize=9)
    return _finish(fig, axes, models, "success (95% task bootstrap)",
                   f"Success by task structure — {label_models(list(table.model))}")


def plot_length(curves: pd.DataFrame, episodes: pd.DataFrame | None = None,
                min_tasks: int = MIN_SEGMENT_TASKS) -> plt.Figure:
    """Fig. 3: smoothed success vs realised actions, one line per method and kept segment, with
    its pointwise interval (uncorrected for smoothing bias). One panel per family and model of
    ``episodes`` (default: of the curves); a panel whose groups kept no segment says so."""
    fig, axes, families, models = _grid(curves if episodes is None else episodes, 3.6, 2.5)
    for j, family in enumerate(families):
        for i, model in enumerate(models):
            ax = axes[i][j]
            part = curves[(curves.family == family) & (curves.model == model)]
            if part.empty:
                ran = episodes is None or ((episodes.family == family) & (episodes.model == model)).any()
                _say(ax, f"no segment reaches {min_tasks} tasks" if ran else "not run")
            for memory in [m for m in METHODS if m in set(part.memory)]:
                for n, (_, seg) in enumerate(part[part.memory == memory].groupby("segment", sort=True)):
                    color = METHOD_COLORS[memory]
                    # full dashed on top: baselines whose view never changes coincide with it
                    ax.plot(seg.bin_center, seg.rate_smoothed, color=color, lw=1.2, label=memory if n == 0 else None,
                            ls="--" if memory == "full" else "-", zorder=3 if memory == "full" else 2)
                    ax.fill_between(seg.bin_center.astype(float), seg.ci_low.astype(float),
                                    seg.ci_high.astype(float), color=color, alpha=0.15, lw=0)
            if i == 0:
                ax.set_title(family, fontsize=9)
            if i == len(models) - 1:
                ax.set_xlabel("realised actions", fontsize=8)
    return _finish(fig, axes, models, "success (smoothed)",
                   f"Success vs realised execution length (5-action bins, bandwidth 7) — "
                   f"{label_models(list(curves.model))}")


__all__ = ["plot_length", "plot_structure"]
