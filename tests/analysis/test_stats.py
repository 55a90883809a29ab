"""Tests for pushbench.analysis.stats (fast: a few seconds in total)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from pushbench.analysis.stats import (
    bootstrap_counts,
    paired_bootstrap_delta,
    pass_hat_k,
    success_rate_with_bootstrap_sd,
    success_vs_length,
    target_scaling,
)


def episodes(outcomes: dict[str, list[int]]) -> pd.DataFrame:
    """Long table with one row per (task, seed)."""
    rows = [(t, s, v) for t, vals in outcomes.items() for s, v in enumerate(vals)]
    return pd.DataFrame(rows, columns=["task_id", "seed", "success"])


# ---------------------------------------------------------------- success rate


def test_bootstrap_counts_are_multinomial_rows() -> None:
    counts = bootstrap_counts(7, 500, np.random.default_rng(1))
    assert counts.shape == (500, 7)
    assert np.all(counts.sum(axis=1) == 7)
    assert abs(counts.mean() - 1.0) < 1e-12


def test_success_rate_hand_example() -> None:
    # Task means 1, 0.5, 0 -> rate 0.5 (unequal seed counts must not reweight tasks).
    df = episodes({"A": [1, 1, 1], "B": [1, 0], "C": [0, 0]})
    res = success_rate_with_bootstrap_sd(df, n_resamples=20_000, seed=3)
    assert res.rate == pytest.approx(0.5)
    assert (res.n_tasks, res.n_episodes) == (3, 7)
    # Bootstrap SD of a mean of 3 task means -> sqrt(pop_var / 3) = sqrt((1/6) / 3).
    assert res.sd == pytest.approx(math.sqrt(1 / 18), rel=0.03)


def test_success_rate_accepts_mapping_and_is_deterministic() -> None:
    data = {"A": [1.0, 0.0], "B": [1.0, 1.0], "C": [0.0, 0.0], "D": [1.0, 0.0]}
    r1 = success_rate_with_bootstrap_sd(data, n_resamples=2000, seed=5)
    r2 = success_rate_with_bootstrap_sd(episodes({k: [int(v) for v in vs] for k, vs in data.items()}),
                                        n_resamples=2000, seed=5)
    assert r1 == r2
    assert r1.rate == pytest.approx(0.5)


def test_all_failure_sd_is_zero() -> None:
    res = success_rate_with_bootstrap_sd(episodes({"A": [0, 0], "B": [0, 0, 0], "C": [0]}))
    assert res.rate == 0.0
    assert res.sd == 0.0


# ---------------------------------------------------------------- paired delta


def two_conditions(a: dict[str, list[int]], b: dict[str, list[int]]) -> pd.DataFrame:
    return pd.concat([episodes(a).assign(cond="a"), episodes(b).assign(cond="b")], ignore_index=True)


def test_paired_delta_hand_example() -> None:
    a = {"T1": [0, 0], "T2": [1, 0], "T3": [1, 1]}
    b = {"T1": [1, 0], "T2": [1, 1], "T3": [1, 1]}
    res = paired_bootstrap_delta(two_conditions(a, b), "cond", "a", "b", n_resamples=5000)
    assert res.delta == pytest.approx(2 / 6)  # mean(b)=5/6, mean(a)=3/6
    assert (res.n_pairs, res.n_clusters) == (6, 3)
    # Cluster resamples can only produce task-mean diffs in [0, 0.5].
    assert 0.0 <= res.ci_low <= res.delta <= res.ci_high <= 0.5
    reverse = paired_bootstrap_delta(two_conditions(a, b), "cond", "b", "a", n_resamples=5000)
    assert reverse.delta == pytest.approx(-res.delta)


def test_paired_delta_unmatched_pairs_raise() -> None:
    df = two_conditions({"T1": [0, 1], "T2": [1]}, {"T1": [1, 1], "T2": [1, 0]})
    with pytest.raises(ValueError, match="unmatched pair"):
        paired_bootstrap_delta(df, "cond", "a", "b")


def test_paired_delta_missing_condition_raises() -> None:
    df = two_conditions({"T1": [0]}, {"T1": [1]})
    with pytest.raises(ValueError, match="not found"):
        paired_bootstrap_delta(df, "cond", "a", "zzz")


def draw_paired(rng: np.random.Generator, n_tasks: int, n_seeds: int) -> pd.DataFrame:
    """Task difficulty p_a ~ U(0.1, 0.7), task-specific effect ~ U(0, 0.2), Bernoulli outcomes.

    The cluster bootstrap targets the expected effect over the task distribution, E[effect] = 0.1.
    """
    p_a = rng.uniform(0.1, 0.7, n_tasks)
    p_b = p_a + rng.uniform(0.0, 0.2, n_tasks)
    task = np.repeat(np.arange(n_tasks), n_seeds)
    seed = np.tile(np.arange(n_seeds), n_tasks)
    y_a = rng.random(task.size) < p_a[task]
    y_b = rng.random(task.size) < p_b[task]
    return pd.DataFrame(
        {
            "task_id": np.concatenate([task, task]),
            "seed": np.concatenate([seed, seed]),
            "cond": np.repeat(["a", "b"], task.size),
            "success": np.concatenate([y_a, y_b]).astype(float),
        }
    )


def test_paired_interval_coverage() -> None:
    true_delta, n_draws = 0.1, 800
    rng = np.random.default_rng(20240)
    hits = 0
    for i in range(n_draws):
        res = paired_bootstrap_delta(draw_paired(rng, 60, 3), "cond", "a", "b", n_resamples=2000, seed=i)
        hits += res.ci_low <= true_delta <= res.ci_high
    coverage = hits / n_draws
    assert 0.93 <= coverage <= 0.97, coverage


# ---------------------------------------------------------------- target scaling


def test_target_scaling_groups() -> None:
    df = pd.concat(
        [
            episodes({"A": [1, 1], "B": [1, 0]}).assign(controller="c1", target=10),
            episodes({"A": [0, 0], "B": [1, 0]}).assign(controller="c1", target=20),
            episodes({"A": [0, 0], "B": [0, 0]}).assign(controller="c2", target=10),
        ],
        ignore_index=True,
    )
    out = target_scaling(df, n_resamples=1000)
    assert list(out.columns) == ["controller", "target", "success_rate", "bootstrap_sd", "n_tasks", "n_episodes"]
    assert list(zip(out.controller, out.target)) == [("c1", 10), ("c1", 20), ("c2", 10)]
    assert out.success_rate.tolist() == pytest.approx([0.75, 0.25, 0.0])
    assert out.bootstrap_sd.iloc[2] == 0.0
    assert (out.bootstrap_sd.iloc[:2] > 0).all()


# ---------------------------------------------------------------- pass^k


def test_pass_hat_k_hand_example() -> None:
    one = episodes({"T": [1, 1, 0, 0]})
    assert pass_hat_k(one, 2) == pytest.approx(1 / 6)
    assert pass_hat_k(one, 1) == pytest.approx(0.5)
    two = episodes({"T": [1, 1, 0, 0], "U": [1, 1, 1, 0]})  # (1/6 + 3/6) / 2
    assert pass_hat_k(two, 2) == pytest.approx(1 / 3)
    assert pass_hat_k(two, 4) == 0.0


def test_pass_hat_k_needs_enough_trials() -> None:
    with pytest.raises(ValueError):
        pass_hat_k(episodes({"T": [1, 1]}), 3)


# ---------------------------------------------------------------- success vs length


def test_success_vs_length_drops_sparse_segments() -> None:
    dense = np.repeat(np.arange(0, 50), 4)  # bins 0..9, 200 episodes
    short_run = np.array([100, 101, 106, 107] * 10)  # 2 bins, 40 episodes: too few bins
    thin_run = np.array([150, 156, 161, 166])  # 4 bins, 4 episodes: too few tasks
    lengths = np.concatenate([dense, short_run, thin_run])
    out = success_vs_length(lengths, np.ones(lengths.size))
    assert out.segment.unique().tolist() == [0]
    assert out.bin_center.tolist() == [2.5 + 5 * k for k in range(10)]
    assert out.n.sum() == 200
    # Relaxing the rules brings the sparse runs back as separate segments.
    loose = success_vs_length(lengths, np.ones(lengths.size), min_bins=2, min_tasks=1)
    assert loose.segment.nunique() == 3


def test_success_vs_length_constant_input_is_constant() -> None:
    rng = np.random.default_rng(0)
    lengths = rng.integers(0, 80, 500)
    for value in (0.0, 0.4, 1.0):
        out = success_vs_length(lengths, np.full(lengths.size, value))
        assert np.allclose(out.rate_smoothed, value)
        assert np.allclose(out.rate_raw, value)
        assert (out.ci_low <= out.rate_smoothed).all() and (out.rate_smoothed <= out.ci_high).all()
        assert out.ci_low.min() >= 0.0 and out.ci_high.max() <= 1.0


def test_success_vs_length_decreasing_trend() -> None:
    rng = np.random.default_rng(1)
    lengths = rng.integers(0, 100, 4000)
    successes = (rng.random(lengths.size) < 0.9 - 0.008 * lengths).astype(float)
    out = success_vs_length(lengths, successes)
    assert out.segment.nunique() == 1
    assert np.all(np.diff(out.rate_smoothed) < 0)
    assert out.rate_smoothed.iloc[0] > 0.75 and out.rate_smoothed.iloc[-1] < 0.2
    # Smoothing pools neighbours: intervals are narrower than a single bin's binomial interval.
    single = 1.96 * np.sqrt(out.rate_raw * (1 - out.rate_raw) / out.n)
    assert np.all((out.ci_high - out.ci_low) / 2 < single)
