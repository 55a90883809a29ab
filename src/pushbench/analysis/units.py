"""Work-unit families (DataOps-lite, SWE-lite): success by condition (Fig. 2), per-unit-type table."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from pushbench.analysis import stats
from pushbench.analysis.deltas import paired_deltas
from pushbench.analysis.flags import from_rates, with_flags
from pushbench.analysis.figures import CONTROLLER_COLORS, label_models, model_order

CONDITION = ["model", "backend", "memory", "controller"]


def condition_label(row: pd.Series) -> str:
    """Controllers run with the plain transcript; memory baselines are named by their memory."""
    parts = [row.controller if row.memory == "full" else f"{row.memory} ({row.controller})"]
    if row.backend != "native":
        parts.append(row.backend)
    return " · ".join(parts)


def success_table(episodes: pd.DataFrame, n_resamples: int, seed: int) -> pd.DataFrame:
    rows = []
    for key, group in episodes.groupby(CONDITION, sort=True):
        rate = stats.success_rate_with_bootstrap_sd(group, n_resamples=n_resamples, seed=seed)
        rows.append({**dict(zip(CONDITION, key)), "success": rate.rate, "success_sd": rate.sd,
                     "unit_success": group.get("unit_success_rate", pd.Series(dtype=float)).mean(),
                     "checker_runs": group.get("checker_runs", pd.Series(dtype=float)).mean(),
                     "verifier_recoveries": group.get("verifier_recoveries", pd.Series(dtype=float)).mean(),
                     "false_completion": group.false_completion.mean(), "premature_stop": group.premature_stop.mean(),
                     "duplicates_per_episode": group.duplicate_submissions.mean(), "episodes": len(group)})
    table = with_flags(pd.DataFrame(rows), episodes, CONDITION)
    table["condition"] = table.apply(condition_label, axis=1)
    return table


def controller_deltas(episodes: pd.DataFrame, controller: str, baselines: list[str], n_resamples: int,
                      seed: int) -> pd.DataFrame:
    """Paired success deltas (controller − baseline) per model and backend, plain-transcript runs,
    matched by task and seed."""
    plain = episodes[episodes.memory == "full"]
    parts = [paired_deltas(plain, base, [controller], n_resamples, seed, groups=["model", "backend"])
             for base in baselines]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def success_by_target(episodes: pd.DataFrame, n_resamples: int, seed: int) -> pd.DataFrame:
    """Success by backlog size N per model and controller (plain-transcript runs, native backend)."""
    plain = episodes[(episodes.memory == "full") & (episodes.backend == "native")]
    by_n = stats.target_scaling(plain, by=("model", "controller"), n_resamples=n_resamples, seed=seed)
    return by_n.merge(from_rates(by_n, ["model", "controller"]), on=["model", "controller"], how="left")


def per_unit_type(episodes: pd.DataFrame) -> pd.DataFrame:
    """Pass rate of units by type, per model and condition (from each episode's unit_results)."""
    records = []
    for row in episodes.itertuples(index=False):
        for unit in (getattr(row, "unit_results", None) or {}).values():
            records.append({"model": row.model, "backend": row.backend, "memory": row.memory,
                            "controller": row.controller, "unit_type": unit["kind"], "passed": bool(unit["passed"])})
    units = pd.DataFrame(records)
    if units.empty:
        return units
    table = units.groupby(CONDITION + ["unit_type"], sort=True).passed.agg(["mean", "size"]).reset_index()
    return table.rename(columns={"mean": "unit_pass_rate", "size": "units"})


def plot_success_bars(table: pd.DataFrame, title: str) -> plt.Figure:
    """Success per model and condition: colour = controller, hatching = memory baseline (//) or a
    backend other than native (..)."""
    models = model_order(list(table.model))
    rank = {c: i for i, c in enumerate(["standard", "gated", "stateqgp", "unitqgp"])}
    ordered = table.assign(_full=table.memory != "full", _rank=table.controller.map(rank).fillna(9),
                           _other_backend=table.backend != "native")
    ordered = ordered.sort_values(["_full", "memory", "_rank", "_other_backend", "backend"]).drop_duplicates("condition")
    fig, ax = plt.subplots(figsize=(1.6 + 1.1 * len(models) * max(1, len(ordered)) / 3, 3.4))
    width = 0.8 / max(1, len(ordered))
    for i, row in enumerate(ordered.itertuples(index=False)):
        part = table[table.condition == row.condition].set_index("model").reindex(models)
        x = np.arange(len(models)) + i * width
        hatch = "//" if row.memory != "full" else (".." if row.backend != "native" else None)
        run = part.success.notna().to_numpy()  # a condition not run for a model gets no bar
        ax.bar(x[run], part.success[run], width, yerr=part.success_sd[run], capsize=2, label=row.condition,
               color=CONTROLLER_COLORS.get(row.controller), hatch=hatch, edgecolor="white", linewidth=0.5)
    ax.set_xticks(np.arange(len(models)) + width * (len(ordered) - 1) / 2, models)
    ax.set_ylabel("success rate (± task-bootstrap SD)")
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.set_title(f"{title} — {label_models(models)}", fontsize=9)
    fig.tight_layout()
    return fig
