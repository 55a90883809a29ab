"""The fork table: of the failed episodes forked at a step, how many the new condition rescued.

Input: the scored rows of a fork run (``pushbench fork``: each row has ``parent``, ``fork_step``,
``fork_at`` and the new controller). One row per (condition taken over from, new controller,
memory, model, fork point): the failed parents forked there, how many forks succeeded, the rescue
rate with a 95% task-cluster bootstrap percentile interval (every fork of a task, over its seeds,
moves together, as in ``pushbench.analysis.stats``), and the mean verified count the forks reached.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pushbench.analysis.stats import bootstrap_counts

COLUMNS = ["from_controller", "controller", "memory", "model", "fork_at", "forks", "rescued", "rescue_rate",
           "ci_low", "ci_high", "mean_valid"]
KEYS = ["from_controller", "controller", "memory", "model", "fork_at"]


def _order(label: str) -> tuple[int, float]:
    """Percentages in numeric order, then absolute steps."""
    return (0, float(label[:-1])) if label.endswith("%") else (1, float(label))


def from_controller(episode_id: str) -> str:
    """The parent's controller, from a fork's id (``...|fork@K<controller|memory|model``)."""
    _, _, parent = str(episode_id).partition("<")
    return parent.split("|")[0] if parent else ""


def rescue_interval(group: pd.DataFrame, n_resamples: int, seed: int) -> tuple[float, float]:
    """95% percentile interval of rescued/forks, resampling tasks with replacement."""
    per_task = group.groupby("task_id", sort=True)["success"].agg(["sum", "size"])
    rescued, forks = per_task["sum"].to_numpy(float), per_task["size"].to_numpy(float)
    rates = rescued / forks
    if np.ptp(rates) == 0.0:
        return float(rates[0]), float(rates[0])
    counts = bootstrap_counts(len(per_task), n_resamples, np.random.default_rng(seed))
    boot = (counts @ rescued) / (counts @ forks)
    low, high = np.percentile(boot, [2.5, 97.5])
    return float(low), float(high)


def fork_table(forks: pd.DataFrame, n_resamples: int = 10_000, seed: int = 0) -> pd.DataFrame:
    if forks.empty:
        return pd.DataFrame(columns=COLUMNS)
    missing = {"parent", "fork_at", "success", "valid_count", "task_id"} - set(forks.columns)
    if missing:
        raise ValueError(f"not scored fork rows: missing {', '.join(sorted(missing))}")
    forks = forks.assign(from_controller=forks["episode_id"].map(from_controller) if "episode_id" in forks else "",
                         fork_at=forks["fork_at"].astype(str), success=forks["success"].astype(bool))
    rows = []
    for key, group in forks.groupby(KEYS, sort=False):
        low, high = rescue_interval(group, n_resamples, seed)
        rescued = int(group["success"].sum())
        rows.append({**dict(zip(KEYS, key)), "forks": len(group), "rescued": rescued,
                     "rescue_rate": round(rescued / len(group), 4), "ci_low": round(low, 4),
                     "ci_high": round(high, 4), "mean_valid": round(float(group["valid_count"].mean()), 2)})
    table = pd.DataFrame(rows, columns=COLUMNS)
    table["_o"] = table["fork_at"].map(_order)
    return table.sort_values(["from_controller", "controller", "memory", "model", "_o"]).drop(columns="_o") \
        .reset_index(drop=True)


def fresh_reference(episodes: pd.DataFrame, from_controller: str, controller: str, n_resamples: int = 10_000,
                    seed: int = 0) -> pd.DataFrame:
    """What the new controller achieved from step 0 on the same failures: for each model, the
    episodes of ``from_controller`` that failed and how often ``controller`` succeeded on the same
    task and seed in the same grid (the fork table's step-0 counterpart)."""
    keys = ["task_id", "model", "memory", "seed"]
    failed = episodes[(episodes.controller == from_controller) & ~episodes.success.astype(bool)][keys]
    fresh = episodes[episodes.controller == controller][keys + ["success"]]
    paired = failed.merge(fresh, on=keys, how="inner")
    rows = []
    for model, group in paired.groupby("model", sort=True):
        group = group.assign(success=group.success.astype(bool))
        low, high = rescue_interval(group, n_resamples, seed)
        rows.append({"model": model, "controller": controller, "failed": len(group),
                     "succeeded": int(group.success.sum()), "share": round(float(group.success.mean()), 4),
                     "ci_low": round(low, 4), "ci_high": round(high, 4)})
    return pd.DataFrame(rows, columns=["model", "controller", "failed", "succeeded", "share", "ci_low", "ci_high"])


def plot_rescue(table: pd.DataFrame, title: str):
    """Rescue rate against the fork point, one line per model, with the 95% intervals."""
    import matplotlib.pyplot as plt

    from pushbench.analysis.figures import model_order

    table = table[table.fork_at.str.endswith("%")]
    fig, ax = plt.subplots(figsize=(4.8, 3.0))
    for i, model in enumerate(model_order(list(table.model))):
        rows = table[table.model == model]
        x = [float(a[:-1]) + (i - 1) * 1.5 for a in rows.fork_at]
        ax.errorbar(x, rows.rescue_rate, yerr=[rows.rescue_rate - rows.ci_low, rows.ci_high - rows.rescue_rate],
                    marker="o", capsize=3, label=f"{model} ({int(rows.forks.max())} failed)")
    ax.set(xlabel="fork point (% of the failed episode's steps)", ylabel="share succeeding after the fork",
           ylim=(0, 1.05), title=title)
    ax.legend(fontsize=7, loc="lower left")
    return fig


def _simlm(table: pd.DataFrame) -> str:
    return "SimLM " if all(str(m).startswith("sim/") for m in table.model) else ""


def rescue_line(table: pd.DataFrame) -> str:
    """Pooled over models: at each fork point, how many failed episodes succeed after the fork."""
    if table.empty:
        return "no forks"
    pooled = table.groupby("fork_at", sort=False)[["rescued", "forks"]].sum()
    points = sorted(pooled.index, key=_order)
    first = table.iloc[0]
    parts = [f"{int(pooled.rescued[p])} of {int(pooled.forks[p])} at {p}" for p in points]
    return (f"{_simlm(table)}forks: failed {first.from_controller} episodes succeeding under {first.controller} "
            f"after the fork, pooled over models: {', '.join(parts)}")


def fresh_line(fresh: pd.DataFrame) -> str:
    """How often the new controller, run from step 0, succeeded on the same failed tasks and seeds."""
    if fresh.empty:
        return "no failed episodes with a from-step-0 counterpart"
    from pushbench.analysis.figures import model_order

    own = fresh.set_index("model")
    per_model = ", ".join(f"{m} {own.succeeded[m]}/{own.failed[m]}" for m in model_order(list(fresh.model)))
    return (f"{_simlm(fresh)}{fresh.controller.iloc[0]} from step 0 succeeded on {int(fresh.succeeded.sum())} of "
            f"{int(fresh.failed.sum())} of the same failed tasks and seeds ({per_model})")


def trend_line(table: pd.DataFrame) -> str:
    """Per model, the rescue rate at the first and at the last percentage fork point."""
    from pushbench.analysis.figures import model_order

    table = table[table.fork_at.astype(str).str.endswith("%")] if not table.empty else table
    if table.empty:
        return "no forks at a percentage of the steps"
    points = sorted(set(table.fork_at), key=_order)
    rate = table.set_index(["model", "fork_at"]).rescue_rate
    parts = [f"{m} {rate[m, points[0]]:.2f} → {rate[m, points[-1]]:.2f}" for m in model_order(list(table.model))
             if (m, points[0]) in rate.index and (m, points[-1]) in rate.index]
    return f"{_simlm(table)}rescue rate from the fork at {points[0]} to {points[-1]}: {', '.join(parts) or 'none'}"
