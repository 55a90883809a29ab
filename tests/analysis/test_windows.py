"""The sensitivity proof and the window sweep (analysis.windows) on hand-made long-split rows."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest

from pushbench.analysis import windows as w

TASKS = ["t1", "t2", "t3", "t4"]


def rows(model: str, memory: str, solved: int, accepted: float = 0.0, split: str = "long") -> list[dict]:
    """One episode per task: the first ``solved`` succeed (3 of 3 accepted), the rest accept ``accepted``."""
    return [{"family": "sweissues", "model": model, "memory": memory, "task_id": t, "seed": 0, "split": split,
             "success": i < solved, "valid_count": 3 if i < solved else accepted, "target": 3}
            for i, t in enumerate(TASKS)]


def episodes() -> pd.DataFrame:
    data = rows("sim/perfect", "full", 4) + rows("sim/perfect", "acg", 4)
    data += rows("sim/perfect@8k", "full", 1) + rows("sim/perfect@8k", "acg", 3)
    data += rows("sim/base@8k", "full", 0, accepted=1) + rows("sim/base", "full", 0, accepted=2)
    data += rows("sim/perfect", "full", 0, split="short")  # a short-split row: never counted
    return pd.DataFrame(data)


def test_the_window_is_read_from_the_model_name() -> None:
    assert w.window_of("sim/base@8k") == 8000 and w.window_of("sim/perfect") == np.inf
    assert w.window_of("sim/base") == 64_000 and np.isnan(w.window_of("openai/gpt-x"))
    assert w.window_label(8000) == "8k" and w.window_label(np.inf) == "unlimited"


def test_a_split_is_memory_bound_when_the_trimmed_reader_fails_half_of_it() -> None:
    table = w.sensitivity_table(episodes(), 200, 0)
    row = table.iloc[0]
    assert (row.unlimited_full, row["8k_full"], row["8k_acg"], row.tasks) == (1.0, 0.25, 0.75, 4)
    assert bool(row.memory_bound)  # 1.0 >= 0.95 and 1 - 0.25 >= 0.5
    solved_at_8k = episodes().assign(success=True)
    assert not w.sensitivity_table(solved_at_8k, 200, 0).iloc[0].memory_bound
    assert "memory-bound" in w.sensitivity_takeaway(table) and "acg with 75%" in w.sensitivity_takeaway(table)


def test_the_sweep_counts_success_and_progress_per_window() -> None:
    sweep = w.sweep_table(episodes(), 200, 0)
    base = sweep[sweep.profile == "sim/base"].set_index("window")
    assert base.success.tolist() == [0.0, 0.0] and base.progress.to_dict() == {8000.0: pytest.approx(1 / 3),
                                                                                64000.0: pytest.approx(2 / 3)}
    wide = w.pivot_sweep(sweep, "sim/perfect")
    assert list(wide.columns) == ["family", "memory", "8k", "unlimited"] and list(wide.memory) == ["full", "acg"]
    assert wide.set_index("memory").loc["acg", "8k"] == 0.75
    assert "full" in w.sweep_takeaway(sweep, "sim/base", "progress")


def test_the_recall_sweep_and_the_figure() -> None:
    recall = pd.DataFrame({"run": ["r", "r", "other"], "family": ["sweissues"] * 3, "memory": ["acg"] * 3,
                           "budget": [4000, 8000, 8000], "needed": [4, 4, 4], "recalled": [1, 3, 4]})
    every = w.recall_sweep(recall)
    assert every.set_index("window").evidence_recall.to_dict() == {4000: 0.25, 8000: 0.875}
    assert w.recall_sweep(recall, ["other"]).evidence_recall.tolist() == [1.0]
    figure = w.plot_sweep(w.sweep_table(episodes(), 200, 0), every)
    assert len(figure.axes) == len(w.SWEEP_PANELS) + 1  # one family: a column of panels and the recall row
    labels = [t.get_text() for t in figure.axes[0].get_xticklabels()]
    assert labels == ["8k", "unl."]


def test_every_memory_has_a_trigger_at_every_window() -> None:
    triggers = w.memory_triggers([8_000, 64_000])
    assert set(triggers.memory) == {"full", "summary", "memgpt", "langgraph-store", "acg"}
    assert (triggers.trigger <= triggers.window).all()
    assert list(w.pivot_triggers(triggers).columns) == ["memory", "8k", "64k"]


def test_progress_puts_the_methods_side_by_side() -> None:
    from pushbench.analysis import acg_eval as ev

    long = episodes()
    long = long[(long.model == "sim/perfect@8k") & (long.split == "long")].assign(model="sim/perfect")
    table = ev.progress_table(long)
    assert list(table.columns) == ["family", "model", "full", "acg"]
    assert table.iloc[0][["full", "acg"]].tolist() == [0.25, 0.75]
    assert ev.progress_takeaway(table) == "sweissues sim/perfect: most progress under acg (0.75), full 0.25"
