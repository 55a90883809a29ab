"""The fork table: rescue rate per new condition and fork point, in fork-point order, with a
task-cluster bootstrap interval."""

from __future__ import annotations

import pandas as pd
import pytest

from pushbench.analysis.forks import COLUMNS, fork_table, from_controller, rescue_interval


def fork_row(at: str, parent: str, ok: bool, valid: int, task: str = "t1") -> dict:
    return {"controller": "stateqgp", "memory": "full", "model": "sim/mini", "fork_at": at, "parent": parent,
            "success": ok, "valid_count": valid, "task_id": task,
            "episode_id": f"{task}|stateqgp|full|sim/mini|native|s0|fork@1<standard|full|sim/mini"}


def test_rescue_rates_per_fork_point() -> None:
    rows = [fork_row(at, p, ok, v, task=p) for at, p, ok, v in
            [("75%", "a", False, 10), ("25%", "a", True, 50), ("25%", "b", True, 52), ("50%", "a", True, 50),
             ("50%", "b", False, 30), ("75%", "b", False, 20), ("100%", "b", False, 20), ("3", "b", True, 51)]]
    table = fork_table(pd.DataFrame(rows), n_resamples=200)
    assert list(table.columns) == COLUMNS
    assert list(table.fork_at) == ["25%", "50%", "75%", "100%", "3"]
    assert set(table.from_controller) == {"standard"}
    assert list(table.forks) == [2, 2, 2, 1, 1] and list(table.rescued) == [2, 1, 0, 0, 1]
    assert list(table.rescue_rate) == [1.0, 0.5, 0.0, 0.0, 1.0] and table.mean_valid.iloc[1] == 40.0
    # all rescued (or none): the interval is the point; one of two tasks: the interval spans 0 to 1
    assert (table.ci_low.iloc[0], table.ci_high.iloc[0]) == (1.0, 1.0)
    assert (table.ci_low.iloc[1], table.ci_high.iloc[1]) == (0.0, 1.0)


def test_the_interval_resamples_tasks_and_is_deterministic() -> None:
    rows = [fork_row("50%", f"p{i}", i % 3 == 0, 10, task=f"t{i % 6}") for i in range(60)]
    group = pd.DataFrame(rows)
    low, high = rescue_interval(group, 2000, seed=5)
    assert (low, high) == rescue_interval(group, 2000, seed=5)
    rate = group.success.mean()
    assert low < rate < high and 0.0 <= low and high <= 1.0
    # tasks t0 and t3 always succeed, the rest never: the interval is that of 2 tasks in 6
    assert low <= 1 / 6 and high >= 1 / 2


def test_the_parent_controller_comes_from_the_fork_id() -> None:
    assert from_controller("t|stateqgp|full|sim/mini|native|s0|fork@12<gated|memgpt|sim/base") == "gated"
    assert from_controller("t|standard|full|sim/mini|native|s0") == ""


def test_unscored_rows_are_refused_and_no_rows_give_an_empty_table() -> None:
    assert fork_table(pd.DataFrame()).empty
    with pytest.raises(ValueError, match="missing success, task_id, valid_count"):
        fork_table(pd.DataFrame([{"controller": "c", "memory": "m", "model": "x", "fork_at": "1", "parent": "p"}]))
