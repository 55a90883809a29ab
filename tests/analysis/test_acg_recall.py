"""The recall table and figure of notebook 07 cover every family the recall stage replays."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402

from pushbench.analysis.acg import RECALL_FAMILIES, plot_recall_vs_length, recall_curve, recall_table  # noqa: E402


def _rows() -> pd.DataFrame:
    rows = [{"run": f"{f}-run", "family": f, "memory": m, "bucket": b, "first_action": low, "decisions": 2,
             "needed": 4, "recalled": 3 if m == "full" else 2, "share": None}
            for f in reversed(RECALL_FAMILIES) for m in ("acg", "full") for b, low in (("1-20", 1), ("21-40", 21))]
    return pd.DataFrame(rows)


def test_the_recall_table_lists_every_family_in_order() -> None:
    table = recall_table(_rows())
    assert list(table.family.drop_duplicates()) == RECALL_FAMILIES
    assert list(table.memory[:2]) == ["full", "acg"]
    assert list(table.evidence_recall[:2]) == [0.75, 0.5] and set(table.decisions) == {4}


def test_the_recall_figure_has_a_panel_per_family() -> None:
    fig = plot_recall_vs_length(recall_curve(_rows()))
    titles = [ax.get_title() for ax in fig.axes if ax.get_visible()]
    assert titles == RECALL_FAMILIES
    three = plot_recall_vs_length(recall_curve(_rows()[_rows().family.isin(RECALL_FAMILIES[:2])]))
    assert [ax.get_title() for ax in three.axes if ax.get_visible()] == RECALL_FAMILIES[:2]
