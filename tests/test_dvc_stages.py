"""dvc.yaml agrees with params.yaml where DVC cannot derive one from the other."""

from __future__ import annotations

from pathlib import Path

import yaml

from pushbench.aggregate import BLACKBOX

ROOT = Path(__file__).resolve().parents[1]


def test_aggregate_depends_on_the_scored_rows_of_every_run() -> None:
    """aggregate reads each experiment's scored.jsonl and the black-box rows; naming those files
    (not data/runs, whose tens of thousands of traces DVC would hash) keeps every run a dependency."""
    stage = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]["aggregate"]
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    wanted = {f"data/runs/{name}/scored.jsonl" for name in params["experiments"]}
    if "blackbox" in params:
        wanted.add(f"data/runs/{BLACKBOX}/episodes.jsonl")
    assert wanted == {d for d in stage["deps"] if d.startswith("data/")}
