"""The long-split notebooks (10-acg-long, 11-window-sweep) write what they promise.

They run with papermill on a slice of real SimLM rows (``tests/fixtures/long_split_results.jsonl``:
two sweissues backlogs, sim/mini, sim/base, sim/pro and sim/perfect with each memory, and
sim/base and sim/perfect at an 8k window) and a small recall file at two view budgets.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from pushbench.analysis.notebooks import execute

ROOT = Path(__file__).resolve().parents[2]
PROMISED = {
    "10-acg-long": {"long_table1_success", "long_progress", "long_table1_average", "long_fig2_structure",
                    "long_fig3_length_bands", "long_cost_calls_tokens", "long_table2_diagnostics",
                    "long_deltas_vs_full", "long_evidence_recall"},
    "11-window-sweep": {"sensitivity", "memory_triggers", "window_sweep_success_perfect", "window_sweep_success_base",
                        "window_sweep_progress_base", "window_sweep_recall"},
}
FIGURES = {"10-acg-long": {"long_fig2_structure", "long_fig3_success_vs_length"}, "11-window-sweep": {"window_sweep"}}


@pytest.fixture(scope="module")
def figures(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("long")
    results = tmp / "results"
    results.mkdir()
    shutil.copy(ROOT / "tests/fixtures/long_split_results.jsonl", results / "episodes.jsonl")
    recall = [{"run": "sweissues-long", "family": "sweissues", "memory": memory, "bucket": "1-20", "first_action": 1,
               "decisions": 3, "needed": 3, "recalled": recalled, "share": recalled / 3, "budget": budget,
               "split": "long"} for memory in ("full", "acg") for budget, recalled in ((4000, 1), (8000, 2))]
    (results / "recall.jsonl").write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in recall))
    for name in PROMISED:
        execute(name, {"results": str(results), "figures": str(tmp / "figures" / name), "n_resamples": 50},
                out_dir=tmp / "notebooks", source_dir=ROOT / "notebooks")
    return tmp / "figures"


@pytest.mark.parametrize("name", list(PROMISED))
def test_each_long_notebook_writes_its_tables_and_figures(figures: Path, name: str) -> None:
    produced = {p.name for p in (figures / name).iterdir()}
    expected = {f"{t}.{e}" for t in PROMISED[name] for e in ("csv", "md")}
    expected |= {f"{f}.{e}" for f in FIGURES[name] for e in ("png", "pdf")}
    assert produced == expected
    for table in PROMISED[name]:
        assert "SimLM" in (figures / name / f"{table}.md").read_text().splitlines()[0] or table == "memory_triggers"


def test_the_sensitivity_table_says_the_slice_is_memory_bound(figures: Path) -> None:
    row = pd.read_csv(figures / "11-window-sweep/sensitivity.csv").iloc[0]
    assert row.family == "sweissues" and row.unlimited_full == 1.0 and row["8k_full"] == 0.0 and row.memory_bound


def test_the_long_table1_has_the_reference_reader_and_no_window_variants(figures: Path) -> None:
    table = pd.read_csv(figures / "10-acg-long/long_table1_success.csv")
    assert "sim/perfect" in set(table.model) and not table.model.str.contains("@").any()
    recall = pd.read_csv(figures / "10-acg-long/long_evidence_recall.csv")
    assert recall.set_index("memory").evidence_recall.to_dict() == pytest.approx({"full": 2 / 3, "acg": 2 / 3}, abs=1e-4)  # saved rounded
