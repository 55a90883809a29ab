"""ACG Tables 2 and 3 from hand-built scored rows."""

from __future__ import annotations

import math

import pandas as pd

from pushbench.analysis.diagnostics import CATEGORIES, continuation_table, outcome_rates, table2


def row(success: bool, memory: str = "acg", family: str = "swe", **diag) -> dict:
    base = {"family": family, "model": "sim/base", "memory": memory, "success": success,
            "interface_rejections": 0, "precondition_rejections": 0, "budget_exhausted": False, "repetition": False,
            "deliverable_present": True, "delivered_but_failed": not success, "rejection_episode": False,
            "rejection_resumed": None, "rejection_delay": None}
    return {**base, **diag}


def episodes() -> pd.DataFrame:
    return pd.DataFrame([
        row(True),
        row(False, interface_rejections=2, repetition=True, rejection_episode=True, rejection_resumed=True,
            rejection_delay=1),
        row(False, deliverable_present=False, delivered_but_failed=False, budget_exhausted=True,
            rejection_episode=True, rejection_resumed=False),
        row(False, precondition_rejections=1, rejection_episode=True, rejection_resumed=True, rejection_delay=3),
        row(False, family="corpus", deliverable_present=None, delivered_but_failed=None),
    ])


def rate(table: pd.DataFrame, family: str, outcome: str, category: str) -> pd.Series:
    pick = table[(table.family == family) & (table.outcome == outcome) & (table.category == category)]
    assert len(pick) == 1
    return pick.iloc[0]


def test_table2_rates_are_within_outcome_groups_over_assessable_episodes():
    long = outcome_rates(episodes())
    failed = rate(long, "swe", "failure", "missing deliverable")
    assert (failed.assessable, failed.episodes_flagged) == (3, 1) and math.isclose(failed.rate, 1 / 3)
    assert rate(long, "swe", "failure", "delivered but failed").rate == 2 / 3
    assert rate(long, "swe", "failure", "interface rejection").rate == 1 / 3
    assert rate(long, "swe", "success", "delivered but failed").rate == 0.0
    corpus = rate(long, "corpus", "failure", "missing deliverable")  # no declared deliverable: not assessable
    assert corpus.assessable == 0 and math.isnan(corpus.rate)
    assert rate(long, "corpus", "failure", "budget exhaustion").assessable == 1
    # overlapping categories: a failed group's rates may sum past 1
    assert long[(long.family == "swe") & (long.outcome == "failure")].rate.sum() > 1


def test_table2_wide_has_one_column_per_category_and_survives_old_runs():
    wide = table2(episodes())
    assert list(wide.columns[-len(CATEGORIES):]) == [c.name for c in CATEGORIES]
    assert len(wide) == 3  # swe success, swe failure, corpus failure
    old = pd.DataFrame([{"family": "swe", "model": "m", "memory": "full", "success": False}])  # scored before diagnostics
    assert (outcome_rates(old).assessable == 0).all()
    assert table2(pd.DataFrame(columns=["family", "model", "memory", "success"])).empty


def test_table3_counts_rejection_episodes_resumption_and_median_delay():
    table = continuation_table(episodes())
    swe = table[table.family == "swe"].iloc[0]
    assert (swe.episodes, swe.rejection_episodes, swe.resumed) == (4, 3, 2)
    assert math.isclose(swe.resumed_share, 2 / 3) and swe.median_delay == 2.0
    corpus = table[table.family == "corpus"].iloc[0]
    assert corpus.rejection_episodes == 0 and math.isnan(corpus.resumed_share)
    by_outcome = continuation_table(episodes(), by=["family", "memory", "success"])
    failed = by_outcome[(by_outcome.family == "swe") & (~by_outcome.success)].iloc[0]
    assert failed.rejection_episodes == 3
