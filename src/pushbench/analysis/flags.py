"""Ceiling and floor flags (issue 19 item 6): a condition that succeeds (or fails) in every target
bucket measures little, so every results table says which of its conditions do.

A condition is at the **ceiling** when its success rate is >= ``CEILING`` in every target bucket it
ran, at the **floor** when it is <= ``FLOOR`` in every bucket; the ``flag`` column holds
``ceiling``, ``floor`` or an empty string. ``save_table`` (``pushbench.analysis.figures``) adds the counts to
a flagged table's caption, which is how the docs count them.
"""

from __future__ import annotations

from typing import Sequence

import pandas as pd

CEILING, FLOOR = 0.98, 0.02
FLAGS = ("ceiling", "floor")


def flag_of(rates: Sequence[float]) -> str:
    """``ceiling``/``floor``/"" for one condition's success rates by target bucket."""
    rates = [float(r) for r in rates]
    if not rates:
        return ""
    if all(r >= CEILING for r in rates):
        return "ceiling"
    if all(r <= FLOOR for r in rates):
        return "floor"
    return ""


def condition_flags(episodes: pd.DataFrame, by: Sequence[str], target: str = "target",
                    value: str = "success") -> pd.DataFrame:
    """One row per condition (``by``) with its ``flag``, from per-episode successes."""
    by = list(by)
    if episodes.empty:
        return pd.DataFrame(columns=[*by, "flag"])
    rates = episodes.groupby([*by, target], sort=True)[value].mean().reset_index()
    return from_rates(rates, by, value)


def from_rates(rates: pd.DataFrame, by: Sequence[str], rate: str = "success_rate") -> pd.DataFrame:
    """One row per condition with its ``flag``, from a table of success rates by target bucket."""
    by = list(by)
    rows = [{**dict(zip(by, key if isinstance(key, tuple) else (key,))), "flag": flag_of(group[rate])}
            for key, group in rates.groupby(by, sort=True)]
    return pd.DataFrame(rows, columns=[*by, "flag"])


def with_flags(table: pd.DataFrame, episodes: pd.DataFrame, by: Sequence[str], target: str = "target") -> pd.DataFrame:
    """``table`` (one row per condition ``by``) with a ``flag`` column computed from ``episodes``."""
    if table.empty:
        return table.assign(flag=pd.Series(dtype=str))
    flags = condition_flags(episodes, by, target)
    return table.merge(flags, on=list(by), how="left").fillna({"flag": ""})


def caption(table: pd.DataFrame) -> str:
    """The sentence a flagged table's caption ends with: how many conditions sit at either bound."""
    counts = {f: int((table["flag"] == f).sum()) for f in FLAGS}
    return (f" flag: {counts['ceiling']} of {len(table)} rows at the ceiling (success >= {CEILING} in every "
            f"target bucket), {counts['floor']} at the floor (<= {FLOOR} in every bucket).")


def ceiling_for_every_profile(by_target: pd.DataFrame, controller: str = "standard",
                              exclude: Sequence[str] = ("sim/perfect",)) -> bool:
    """Is the ``controller`` grid at the ceiling for every model (the reference bound aside)? A
    success-by-target table (``model, controller, target, success_rate``) in, one answer out."""
    part = by_target[(by_target.controller == controller) & ~by_target.model.isin(list(exclude))]
    if part.empty:
        return False
    return bool((from_rates(part, ["model"]).flag == "ceiling").all())
