"""ACG Tables 2 and 3 from scored episodes (the diagnostics of ``pushbench.scoring.diagnostics``).

- **Table 2**: each diagnostic's rate within an outcome group (success / failure), over the episodes
  where that diagnostic is assessable (a family without a declared deliverable, or a run scored before
  the diagnostics existed, is not). The categories overlap, so the rates are not additive.
- **Table 3**: continuation after rejection: episodes with a rejection, the share of them in which
  accepted execution resumed, and the median delay (actions from the first rejection to the next
  accepted call) over the resumed ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import pandas as pd

GROUP = ["family", "model", "memory"]
OUTCOMES = {True: "success", False: "failure"}


@dataclass(frozen=True)
class Category:
    name: str
    column: str  # the scored row's column
    flag: Callable[[pd.Series], pd.Series]  # the column's assessable values -> bool


CATEGORIES = [
    Category("interface rejection", "interface_rejections", lambda s: s > 0),
    Category("precondition rejection", "precondition_rejections", lambda s: s > 0),
    Category("budget exhaustion", "budget_exhausted", lambda s: s.astype(bool)),
    Category("repetition", "repetition", lambda s: s.astype(bool)),
    Category("missing deliverable", "deliverable_present", lambda s: ~s.astype(bool)),
    Category("delivered but failed", "delivered_but_failed", lambda s: s.astype(bool)),
]
TABLE2_COLUMNS = [*GROUP, "outcome", "category", "assessable", "episodes_flagged", "rate"]
TABLE3_COLUMNS = [*GROUP, "episodes", "rejection_episodes", "resumed", "resumed_share", "median_delay"]


def outcome_rates(episodes: pd.DataFrame, by: list[str] | None = None) -> pd.DataFrame:
    """Table 2, long: per group, outcome and category, the assessable episodes, how many show the
    category and the rate (NaN when none is assessable)."""
    by = by or GROUP
    rows = []
    if episodes.empty:
        return pd.DataFrame(columns=[*by, *TABLE2_COLUMNS[len(GROUP):]])
    frame = episodes.assign(outcome=episodes.success.astype(bool).map(OUTCOMES))
    for keys, group in frame.groupby([*by, "outcome"], sort=True):
        for cat in CATEGORIES:
            values = group[cat.column].dropna() if cat.column in group else pd.Series(dtype=object)
            flagged = int(cat.flag(values).sum()) if len(values) else 0
            rows.append({**dict(zip([*by, "outcome"], keys)), "category": cat.name, "assessable": len(values),
                         "episodes_flagged": flagged, "rate": flagged / len(values) if len(values) else float("nan")})
    return pd.DataFrame(rows, columns=[*by, *TABLE2_COLUMNS[len(GROUP):]])


def table2(episodes: pd.DataFrame, by: list[str] | None = None) -> pd.DataFrame:
    """Table 2, wide: one row per group and outcome, one rate column per category (in order)."""
    long = outcome_rates(episodes, by)
    by = by or GROUP
    if long.empty:
        return pd.DataFrame(columns=[*by, "outcome", *(c.name for c in CATEGORIES)])
    wide = long.pivot(index=[*by, "outcome"], columns="category", values="rate")
    return wide.reindex(columns=[c.name for c in CATEGORIES]).reset_index().rename_axis(columns=None)


def continuation_table(episodes: pd.DataFrame, by: list[str] | None = None) -> pd.DataFrame:
    """Table 3 per group (add ``"success"`` to ``by`` for the failed-task group of ACG §4.6)."""
    by = by or GROUP
    rows = []
    for keys, group in episodes.groupby(by, sort=True) if not episodes.empty else []:
        keys = keys if isinstance(keys, tuple) else (keys,)
        hit = group[group.rejection_episode.fillna(False).astype(bool)] if "rejection_episode" in group else group.iloc[:0]
        resumed = hit[hit.rejection_resumed.fillna(False).astype(bool)] if len(hit) else hit
        rows.append({**dict(zip(by, keys)), "episodes": len(group), "rejection_episodes": len(hit),
                     "resumed": len(resumed), "resumed_share": len(resumed) / len(hit) if len(hit) else float("nan"),
                     "median_delay": float(resumed.rejection_delay.median()) if len(resumed) else float("nan")})
    return pd.DataFrame(rows, columns=[*by, *TABLE3_COLUMNS[len(GROUP):]])


__all__ = ["CATEGORIES", "Category", "continuation_table", "outcome_rates", "table2"]
