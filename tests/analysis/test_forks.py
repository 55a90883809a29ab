"""The fork table: rescue rate per new condition and fork point, in fork-point order."""

from __future__ import annotations

import pandas as pd
import pytest

from pushbench.analysis.forks import COLUMNS, fork_table


def test_rescue_rates_per_fork_point() -> None:
    rows = [{"controller": "stateqgp", "memory": "full", "model": "sim/mini", "fork_at": at, "parent": p,
             "success": ok, "valid_count": v}
            for at, p, ok, v in [("75%", "a", False, 10), ("25%", "a", True, 50), ("25%", "b", True, 52),
                                 ("50%", "a", True, 50), ("50%", "b", False, 30), ("75%", "b", False, 20),
                                 ("100%", "b", False, 20), ("3", "b", True, 51)]]
    table = fork_table(pd.DataFrame(rows))
    assert list(table.columns) == COLUMNS
    assert list(table.fork_at) == ["25%", "50%", "75%", "100%", "3"]
    assert list(table.forks) == [2, 2, 2, 1, 1] and list(table.rescued) == [2, 1, 0, 0, 1]
    assert list(table.rescue_rate) == [1.0, 0.5, 0.0, 0.0, 1.0] and table.mean_valid.iloc[1] == 40.0


def test_unscored_rows_are_refused_and_no_rows_give_an_empty_table() -> None:
    assert fork_table(pd.DataFrame()).empty
    with pytest.raises(ValueError, match="missing success, valid_count"):
        fork_table(pd.DataFrame([{"controller": "c", "memory": "m", "model": "x", "fork_at": "1", "parent": "p"}]))
