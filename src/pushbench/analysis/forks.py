"""The fork table: of the failed episodes forked at a step, how many the new condition rescued.

Input: the scored rows of a fork run (``pushbench fork``: each row has ``parent``, ``fork_step``,
``fork_at`` and the new controller). One row per (new controller, memory, model, fork point):
the failed parents forked there, how many forks succeeded, the rescue rate, and the mean verified
count the forks reached.
"""

from __future__ import annotations

import pandas as pd

COLUMNS = ["controller", "memory", "model", "fork_at", "forks", "rescued", "rescue_rate", "mean_valid"]


def _order(label: str) -> tuple[int, float]:
    """Percentages in numeric order, then absolute steps."""
    return (0, float(label[:-1])) if label.endswith("%") else (1, float(label))


def fork_table(forks: pd.DataFrame) -> pd.DataFrame:
    if forks.empty:
        return pd.DataFrame(columns=COLUMNS)
    missing = {"parent", "fork_at", "success", "valid_count"} - set(forks.columns)
    if missing:
        raise ValueError(f"not scored fork rows: missing {', '.join(sorted(missing))}")
    table = (forks.groupby(["controller", "memory", "model", "fork_at"], sort=False)
             .agg(forks=("parent", "size"), rescued=("success", "sum"), mean_valid=("valid_count", "mean"))
             .reset_index())
    table["rescued"] = table["rescued"].astype(int)
    table["rescue_rate"] = (table["rescued"] / table["forks"]).round(4)
    table["mean_valid"] = table["mean_valid"].round(2)
    table["_o"] = table["fork_at"].map(_order)
    return table.sort_values(["controller", "memory", "model", "_o"]).drop(columns="_o")[COLUMNS] \
        .reset_index(drop=True)
