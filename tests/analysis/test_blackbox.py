"""analysis/blackbox.py: rows of real agent products driven by SimLM are labelled as such."""

from __future__ import annotations

import pandas as pd

from pushbench.analysis.blackbox import PRODUCT_KIND, STANDIN_KIND, deltas, success_counts


def episodes(agents: list[tuple[str, str]]) -> pd.DataFrame:
    rows = []
    for agent, model in agents:
        for task in ("t1", "t2"):
            for prompt, success in (("default", task == "t1"), ("checklist", True)):
                rows.append({"agent": agent, "model": model, "backend": "blackbox", "target": 50, "seed": 0,
                             "task_id": task, "controller": prompt, "success": success, "valid_count": 50,
                             "duplicate_submit_rate": 0.0, "steps": 40})
    return pd.DataFrame(rows)


def test_product_rows_are_labelled_and_stand_in_tables_stay_as_they_were() -> None:
    mixed = episodes([("standin-sim-base", "sim/base"), ("claude-code", "sim/base"), ("codex", "sim/base")])
    counts = success_counts(mixed)
    assert list(counts.columns[:2]) == ["agent", "kind"]
    kinds = dict(zip(counts.agent, counts.kind))
    assert kinds == {"claude-code": PRODUCT_KIND, "codex": PRODUCT_KIND, "standin-sim-base": STANDIN_KIND}
    assert set(deltas(mixed, 200, 0).kind) == {PRODUCT_KIND, STANDIN_KIND}
    alone = episodes([("standin-sim-base", "sim/base")])
    assert "kind" not in success_counts(alone).columns and "kind" not in deltas(alone, 200, 0).columns
