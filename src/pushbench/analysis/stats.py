"""Statistics for PushBench results: success rates, task bootstraps, pass^k, length curves.

All functions are pure and deterministic given ``seed``. Bootstraps resample *tasks* with
replacement (a cluster bootstrap: all seeds of a task move together) and are vectorised:
each resample is a row of multinomial task counts, so statistics are matrix products.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypeAlias

import numpy as np
import pandas as pd
from scipy.special import comb
from scipy.stats import norm

Episodes: TypeAlias = pd.DataFrame | Mapping[str, Sequence[float]]


@dataclass(frozen=True)
class SuccessRate:
    """Task-averaged success rate and its task-bootstrap standard deviation."""

    rate: float
    sd: float
    n_tasks: int
    n_episodes: int


@dataclass(frozen=True)
class PairedDelta:
    """Paired difference ``mean(b) - mean(a)`` with a cluster-bootstrap percentile interval."""

    delta: float
    ci_low: float
    ci_high: float
    n_pairs: int
    n_clusters: int


def bootstrap_counts(n_clusters: int, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Return an ``(n_resamples, n_clusters)`` matrix of multinomial resampling counts.

    Row ``r`` says how often each cluster was drawn in resample ``r``; rows sum to
    ``n_clusters``. Built from one block of uniform indices plus a single ``bincount``.
    """
    if n_clusters < 1 or n_resamples < 1:
        raise ValueError("need at least one cluster and one resample")
    idx = rng.integers(0, n_clusters, size=(n_resamples, n_clusters))
    flat = (idx + np.arange(n_resamples)[:, None] * n_clusters).ravel()
    counts = np.bincount(flat, minlength=n_resamples * n_clusters)
    return counts.reshape(n_resamples, n_clusters).astype(np.float64)


def _as_episode_frame(episodes: Episodes, task_col: str, value_col: str) -> pd.DataFrame:
    """Coerce a DataFrame or a ``{task: [outcomes]}`` mapping into a long episode table."""
    if isinstance(episodes, pd.DataFrame):
        missing = {task_col, value_col} - set(episodes.columns)
        if missing:
            raise ValueError(f"missing columns: {sorted(missing)}")
        return episodes[[task_col, value_col]]
    rows = [(task, float(v)) for task, vals in episodes.items() for v in vals]
    return pd.DataFrame(rows, columns=[task_col, value_col])


def per_task_means(episodes: Episodes, task_col: str = "task_id", value_col: str = "success") -> pd.Series:
    """Mean outcome per task (index: task id, sorted)."""
    frame = _as_episode_frame(episodes, task_col, value_col)
    if frame.empty:
        raise ValueError("no episodes")
    values = frame[value_col].astype(float)
    if values.isna().any():
        raise ValueError(f"{value_col} contains missing values")
    return values.groupby(frame[task_col], sort=True).mean()


def success_rate_with_bootstrap_sd(
    episodes: Episodes,
    task_col: str = "task_id",
    value_col: str = "success",
    n_resamples: int = 10_000,
    seed: int = 0,
) -> SuccessRate:
    """Success rate (mean over tasks of per-task mean success) and its task-bootstrap SD.

    ``episodes`` is a per-episode table with ``task_col`` and ``value_col`` (several seeds per
    task allowed) or a mapping ``{task_id: [outcomes, ...]}``. The SD is the standard deviation
    (ddof=1) of the rate over ``n_resamples`` resamples of tasks with replacement; it is
    exactly 0 when every task has the same mean (e.g. all failures).
    """
    means = per_task_means(episodes, task_col, value_col).to_numpy()
    n_episodes = int(len(_as_episode_frame(episodes, task_col, value_col)))
    rate = float(means.mean())
    if np.ptp(means) == 0.0:
        return SuccessRate(rate, 0.0, len(means), n_episodes)
    counts = bootstrap_counts(len(means), n_resamples, np.random.default_rng(seed))
    boot = counts @ means / len(means)
    sd = float(boot.std(ddof=1)) if n_resamples > 1 else 0.0
    return SuccessRate(rate, sd, len(means), n_episodes)


def _paired_differences(
    df: pd.DataFrame, condition_col: str, a: object, b: object, value_col: str, pair_cols: Sequence[str]
) -> pd.DataFrame:
    """Return one row per matched pair with columns ``pair_cols`` and ``diff`` (b minus a)."""
    keys = list(pair_cols)
    sub = df[df[condition_col].isin([a, b])]
    if sub.duplicated(keys + [condition_col]).any():
        raise ValueError(f"duplicate rows for some ({', '.join(keys)}, {condition_col})")
    wide = sub.pivot(index=keys, columns=condition_col, values=value_col)
    for cond in (a, b):
        if cond not in wide.columns:
            raise ValueError(f"condition {cond!r} not found in column {condition_col!r}")
    wide = wide[[a, b]].astype(float)
    unmatched = wide[wide.isna().any(axis=1)]
    if not unmatched.empty:
        examples = ", ".join(map(str, unmatched.index[:5]))
        raise ValueError(f"{len(unmatched)} unmatched pair(s) between {a!r} and {b!r}, e.g. {examples}")
    return wide.assign(diff=wide[b] - wide[a]).reset_index()


def paired_bootstrap_delta(
    df: pd.DataFrame,
    condition_col: str,
    a: object,
    b: object,
    value_col: str = "success",
    pair_cols: Sequence[str] = ("task_id", "seed"),
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
    cluster_col: str | None = None,
) -> PairedDelta:
    """Paired mean difference ``b - a`` with a task-cluster bootstrap percentile interval.

    Rows are matched on ``pair_cols``; every pair must exist under both conditions, otherwise a
    ``ValueError`` is raised. Resampling draws clusters (default: ``pair_cols[0]``, the task)
    with replacement, keeping all pairs of a cluster together; each resample's statistic is
    ``sum(counts * cluster_diff_sums) / sum(counts * cluster_sizes)``.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must be in (0, 1)")
    pairs = _paired_differences(df, condition_col, a, b, value_col, pair_cols)
    if pairs.empty:
        raise ValueError("no pairs to compare")
    cluster_ids = pd.factorize(pairs[cluster_col or pair_cols[0]], sort=True)[0]
    diffs = pairs["diff"].to_numpy()
    sums = np.bincount(cluster_ids, weights=diffs)
    sizes = np.bincount(cluster_ids).astype(np.float64)
    counts = bootstrap_counts(len(sums), n_resamples, np.random.default_rng(seed))
    boot = (counts @ sums) / (counts @ sizes)
    alpha = 1.0 - confidence
    low, high = np.quantile(boot, [alpha / 2, 1.0 - alpha / 2])
    return PairedDelta(float(diffs.mean()), float(low), float(high), len(diffs), len(sums))


def target_scaling(
    df: pd.DataFrame,
    by: Sequence[str] = ("controller",),
    target_col: str = "target",
    task_col: str = "task_id",
    value_col: str = "success",
    n_resamples: int = 10_000,
    seed: int = 0,
) -> pd.DataFrame:
    """Success rate and task-bootstrap SD for every ``(*by, target)`` group.

    Columns: ``*by, target_col, success_rate, bootstrap_sd, n_tasks, n_episodes``; rows sorted
    by the group keys. Group ``i`` (in sorted order) uses seed ``seed + i``.
    """
    keys = [*by, target_col]
    rows = []
    for i, (key, group) in enumerate(df.groupby(keys, sort=True)):
        res = success_rate_with_bootstrap_sd(group, task_col, value_col, n_resamples, seed + i)
        rows.append((*key, res.rate, res.sd, res.n_tasks, res.n_episodes))
    columns = [*keys, "success_rate", "bootstrap_sd", "n_tasks", "n_episodes"]
    return pd.DataFrame(rows, columns=columns)


def pass_hat_k(
    df: pd.DataFrame, k: int, group_cols: Sequence[str] = ("task_id",), value_col: str = "success"
) -> float:
    """pass^k (tau-bench): mean over tasks of ``C(c, k) / C(n, k)``.

    For each task with ``n`` trials and ``c`` successes this is the probability that ``k``
    trials drawn without replacement all succeed. Every task needs ``n >= k``.
    """
    if k < 1:
        raise ValueError("k must be >= 1")
    values = df[value_col].astype(float)
    if not values.isin([0.0, 1.0]).all():
        raise ValueError(f"{value_col} must be 0/1")
    grouped = values.groupby([df[c] for c in group_cols], sort=True).agg(["size", "sum"])
    if grouped.empty:
        raise ValueError("no episodes")
    n, c = grouped["size"].to_numpy(), grouped["sum"].to_numpy()
    if (n < k).any():
        raise ValueError(f"some tasks have fewer than k={k} trials")
    return float(np.mean(comb(c, k) / comb(n, k)))


def _segments(nonempty: np.ndarray) -> np.ndarray:
    """Label runs of consecutive ``True`` bins 0, 1, ...; empty bins get -1."""
    starts = nonempty & ~np.concatenate(([False], nonempty[:-1]))
    labels = np.cumsum(starts) - 1
    return np.where(nonempty, labels, -1)


def _smooth(centers: np.ndarray, n: np.ndarray, s: np.ndarray, bandwidth: float) -> tuple[np.ndarray, np.ndarray]:
    """Count-weighted Gaussian smoothing of bin rates; returns (rate, effective sample size).

    Each episode in bin ``j`` gets weight ``K(c_i - c_j)``, so the estimate at ``c_i`` is
    ``sum_j K n_j r_j / sum_j K n_j`` and ``n_eff = (sum_j K n_j)^2 / sum_j K^2 n_j``.
    """
    kern = np.exp(-0.5 * ((centers[:, None] - centers[None, :]) / bandwidth) ** 2)
    wsum = kern @ n
    rate = (kern @ s) / wsum
    n_eff = wsum**2 / ((kern**2) @ n)
    return rate, n_eff


SVL_COLUMNS = ["segment", "bin_center", "n", "rate_raw", "rate_smoothed", "ci_low", "ci_high"]


def success_vs_length(
    lengths: Sequence[float] | np.ndarray,
    successes: Sequence[float] | np.ndarray,
    bin_width: float = 5,
    bandwidth: float = 7.0,
    min_bins: int = 3,
    min_tasks: int = 30,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Smoothed success rate as a function of realised episode length.

    Episodes fall into bins ``[k*w, (k+1)*w)`` (centre ``(k+0.5)*w``). Runs of consecutive
    nonempty bins form segments; a segment is kept only if it has ``>= min_bins`` bins and
    ``>= min_tasks`` episodes. Within each kept segment (never across a gap) the rate at each
    bin centre is a Gaussian-kernel (sigma = ``bandwidth`` actions) average of bin rates
    weighted by bin counts, with a pointwise normal-approximation interval using the
    effective sample size, clipped to [0, 1]. Returns columns ``SVL_COLUMNS``.
    """
    x = np.asarray(lengths, dtype=float)
    y = np.asarray(successes, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError("lengths and successes must be 1-D arrays of equal length")
    if bin_width <= 0 or bandwidth <= 0:
        raise ValueError("bin_width and bandwidth must be positive")
    if x.size == 0:
        return pd.DataFrame(columns=SVL_COLUMNS)
    idx = np.floor(x / bin_width).astype(np.int64)
    idx -= idx.min()
    n = np.bincount(idx).astype(np.float64)
    s = np.bincount(idx, weights=y)
    centers = (np.arange(len(n)) + 0.5 + np.floor(x.min() / bin_width)) * bin_width
    labels = _segments(n > 0)
    z = norm.ppf(0.5 + confidence / 2)
    frames: list[pd.DataFrame] = []
    for lab in range(labels.max() + 1):
        sel = labels == lab
        if sel.sum() < min_bins or n[sel].sum() < min_tasks:
            continue
        rate, n_eff = _smooth(centers[sel], n[sel], s[sel], bandwidth)
        half = z * np.sqrt(rate * (1.0 - rate) / n_eff)
        frames.append(
            pd.DataFrame(
                {
                    "segment": len(frames),
                    "bin_center": centers[sel],
                    "n": n[sel].astype(np.int64),
                    "rate_raw": s[sel] / n[sel],
                    "rate_smoothed": rate,
                    "ci_low": np.clip(rate - half, 0.0, 1.0),
                    "ci_high": np.clip(rate + half, 0.0, 1.0),
                }
            )
        )
    if not frames:
        return pd.DataFrame(columns=SVL_COLUMNS)
    return pd.concat(frames, ignore_index=True)
