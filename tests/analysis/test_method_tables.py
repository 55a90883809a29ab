"""Comparisons a reader takes in across a row: methods as columns, the line saying which method is
highest where, and the RepoScan main table's figure and takeaway."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
from matplotlib.container import BarContainer
import pandas as pd

from pushbench.analysis.acg import best_method_line, by_method
from pushbench.analysis.reposcan import main_takeaway, plot_main


def long_table() -> pd.DataFrame:
    rows = [("planning", "sim/mini", "acg", 0.3), ("planning", "sim/mini", "full", 0.1),
            ("planning", "sim/mini", "memgpt", 0.3), ("corpus", "sim/mini", "full", 0.5),
            ("corpus", "sim/mini", "acg", 0.4)]
    return pd.DataFrame(rows, columns=["family", "model", "memory", "success"])


def test_by_method_puts_methods_in_columns_full_first_and_keeps_the_row_order() -> None:
    wide = by_method(long_table())
    assert list(wide.columns) == ["family", "model", "full", "memgpt", "acg"]
    assert list(wide.family) == ["planning", "corpus"]  # the table's own order, not sorted
    assert wide.loc[0, "acg"] == 0.3 and wide.loc[1, "full"] == 0.5
    assert math.isnan(wide.loc[1, "memgpt"])  # a method that did not run in a setting stays empty


def test_best_method_line_counts_a_tie_for_each_method_in_it() -> None:
    line = best_method_line(long_table())
    assert line == "highest success in the 2 family × model settings (ties count for each): full 1, memgpt 1, acg 1"
    assert best_method_line(long_table().iloc[0:0]) == "no settings"


def main_table() -> pd.DataFrame:
    conditions = [("full", "standard", 0.5), ("full", "gated", 0.8), ("full", "stateqgp", 0.9),
                  ("memgpt", "standard", 0.45)]
    rows = [{"model": model, "backend": "native", "memory": memory, "controller": controller,
             "success": success - shift, "success_sd": 0.05}
            for model, shift in (("sim/base", 0.0), ("sim/mini", 0.2)) for memory, controller, success in conditions]
    return pd.DataFrame(rows)


def test_the_main_figure_has_a_bar_per_model_and_condition_memory_baselines_hatched() -> None:
    fig = plot_main(main_table())
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["sim/mini", "sim/base"]  # weakest first
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["standard", "gated", "stateqgp", "standard + memgpt"]
    bars = [c for c in ax.containers if isinstance(c, BarContainer)]
    assert [len(c.patches) for c in bars] == [2, 2, 2, 2]
    assert {bar.get_hatch() for bar in bars[3].patches} == {"//"} and bars[0].patches[0].get_hatch() is None
    plt.close(fig)


def test_the_main_takeaway_gives_stateqgp_beside_standard_per_model() -> None:
    assert main_takeaway(main_table()) == ("sim/mini: stateqgp 0.700, standard 0.300\n"
                                           "sim/base: stateqgp 0.900, standard 0.500")
    assert main_takeaway(main_table().query("controller != 'stateqgp'")) == "no model ran both stateqgp and standard"
