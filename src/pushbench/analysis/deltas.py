"""Paired success deltas between controllers, matched by task and seed (every family)."""

from __future__ import annotations

import pandas as pd

from pushbench.analysis import stats


def paired_deltas(episodes: pd.DataFrame, baseline: str, others: list[str], n_resamples: int, seed: int,
                  by_target: bool = True, groups: list[str] | None = None) -> pd.DataFrame:
    """Paired success deltas (other − baseline), matched by task and seed, per model (and N),
    or per ``groups`` when given (e.g. model and backend)."""
    rows = []
    groups = groups or (["model", "target"] if by_target else ["model"])
    for key, group in episodes.groupby(groups, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        for other in others:
            if other not in set(group.controller) or baseline not in set(group.controller):
                continue
            d = stats.paired_bootstrap_delta(group, "controller", baseline, other, n_resamples=n_resamples, seed=seed)
            rows.append({**dict(zip(groups, key)), "comparison": f"{other} − {baseline}", "delta": d.delta,
                         "ci_low": d.ci_low, "ci_high": d.ci_high, "pairs": d.n_pairs})
    return pd.DataFrame(rows)
