"""The ACG evaluation's tables on small hand-built frames: matching on shared tasks, Table 1's
ranks and equal-weight average, Fig. 2's structure groups, Fig. 3's segments, the §4.5 cost
ratios, pass^k and the seed spread, paired deltas with their noise floor."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from pushbench.analysis import acg_eval as ev
from pushbench.analysis.acg_eval_figures import plot_length, plot_structure

STRUCT = {"planning": {"planning_kind": "shopping", "level": 1}, "corpus": {"n_clues": 2}, "sweissues": {"n_hunks": 1}}


def row(family: str, memory: str, task: int, success: bool, model: str = "sim/base", seed: int = 0,
        steps: int = 10, calls: int = 10, tokens: int = 1000, **extra) -> dict:
    return {"family": family, "model": model, "memory": memory, "controller": "standard", "backend": "native",
            "task_id": f"{family}-{task}", "seed": seed, "success": success, "target": 1, "steps": steps,
            "llm_calls": calls, "input_tokens": tokens - 100, "output_tokens": 100, **STRUCT[family], **extra}


def frame(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows)


def test_eval_rows_keep_only_the_methods_on_the_three_families_and_the_shared_tasks() -> None:
    rows = [row("corpus", "full", t, True) for t in range(4)] + [row("corpus", "acg", t, True) for t in range(2)]
    rows += [row("corpus", "full", 0, True) | {"controller": "gated"},
             row("corpus", "full", 0, True) | {"family": "reposcan"}]
    out = ev.eval_rows(frame(rows))
    assert sorted(out.task_id.unique()) == ["corpus-0", "corpus-1"]  # acg ran two tasks: full is cut to them
    assert len(out) == 4 and set(out.controller) == {"standard"} and set(out.family) == {"corpus"}


def test_table1_ranks_methods_within_a_setting_and_shares_ties() -> None:
    rows = [row("corpus", m, t, t < n) for m, n in (("full", 1), ("summary", 3), ("acg", 3)) for t in range(4)]
    table = ev.success_table(ev.eval_rows(frame(rows)), n_resamples=200, seed=0)
    assert list(table.memory) == ["full", "summary", "acg"]  # METHODS order: full first, acg last
    assert list(table.success) == [0.25, 0.75, 0.75]
    assert list(table["rank"]) == [3, 1, 1]
    assert (table.success_sd > 0).all() and list(table.tasks) == [4, 4, 4]


def test_the_equal_weight_average_is_over_families_not_episodes_and_counts_firsts() -> None:
    rows = [row("corpus", m, t, t < n) for m, n in (("full", 2), ("acg", 4)) for t in range(4)]
    rows += [row("planning", m, t, t < n) for m, n in (("full", 1), ("acg", 0)) for t in range(10)]
    table = ev.success_table(ev.eval_rows(frame(rows)), n_resamples=200, seed=0)
    avg = ev.average_table(table).set_index("memory")
    assert avg.loc["acg", "average_success"] == pytest.approx((1.0 + 0.0) / 2)
    assert avg.loc["full", "average_success"] == pytest.approx((0.5 + 0.1) / 2)
    assert avg.loc["acg", "first_in"] == 1 and avg.loc["full", "first_in"] == 1
    sds = table[table.memory == "full"].success_sd
    assert avg.loc["full", "average_sd"] == pytest.approx(math.sqrt((sds ** 2).sum()) / 2)
    assert list(avg["rank"]) == [2, 1]  # full 0.3, acg 0.5
    assert (table.set_index("memory").flag.loc["acg"] == ["floor", "ceiling"]).all()  # planning then corpus


def test_a_method_missing_a_family_gets_no_average_but_the_shared_families_give_one() -> None:
    rows = [row("corpus", m, 0, True) for m in ("full", "acg")] + [row("planning", "full", 0, False)]
    table = ev.success_table(ev.eval_rows(frame(rows)), n_resamples=10, seed=0)
    overall = ev.average_table(table)
    assert list(overall.memory) == ["full"] and list(overall.families) == ["planning+corpus"]
    assert ev.shared_families(table) == ["corpus"]
    shared = ev.average_table(table, ev.shared_families(table))
    assert list(shared.memory) == ["full", "acg"] and list(shared.families) == ["corpus", "corpus"]


def test_structure_groups_come_from_the_scored_rows_with_intervals() -> None:
    rows = [row("planning", "full", t, t % 2 == 0, planning_kind=k, level=lv)
            for t, (k, lv) in enumerate([("shopping", 1), ("travel", 2)] * 6)]
    rows += [row("sweissues", "full", t, t < 3, n_hunks=1 + t % 3) for t in range(6)]
    rows += [row("corpus", "full", t, True, n_clues=2 + t % 3) for t in range(6)]
    table = ev.structure_table(ev.eval_rows(frame(rows)), n_resamples=200, seed=0)
    plan = table[table.family == "planning"].set_index("structure")
    assert plan.loc["shopping L1", "success"] == 1.0 and plan.loc["travel L2", "success"] == 0.0
    assert plan.loc["shopping L1", "ci_low"] == 1.0  # an all-success group has a zero-width interval
    swe = table[table.family == "sweissues"].set_index("structure")
    assert list(swe.index) == ["1 hunk", "2 hunks", "3 hunks"] and list(swe.tasks) == [2, 2, 2]
    assert list(swe.success) == [0.5, 0.5, 0.5] and (swe.ci_low < 0.5).all() and (swe.ci_high > 0.5).all()
    assert list(table[table.family == "corpus"].structure) == ["2 clues", "3 clues", "4 clues"]


def test_structure_without_its_columns_is_a_clear_error() -> None:
    rows = [row("sweissues", "full", 0, True)]
    rows[0].pop("n_hunks")
    with pytest.raises(ValueError, match="n_hunks"):
        ev.structure_table(frame(rows), n_resamples=10, seed=0)


def test_length_curves_keep_segments_of_three_bins_and_thirty_tasks() -> None:
    # 40 episodes over actions 1-14 (bins 0-4, 5-9, 10-14) and 10 far out at 80 (one bin: dropped)
    rows = [row("corpus", "full", t, t % 4 != 0, steps=1 + t % 14) for t in range(40)]
    rows += [row("corpus", "full", 100 + t, False, steps=80) for t in range(10)]
    curves = ev.length_curves(frame(rows))
    assert list(curves.bin_center) == [2.5, 7.5, 12.5] and curves.n.sum() == 40
    assert ((curves.ci_low <= curves.rate_smoothed) & (curves.rate_smoothed <= curves.ci_high)).all()
    few = ev.length_curves(frame(rows[:29]))  # 29 tasks: below the 30-task minimum
    assert few.empty and list(few.columns) == ev.LENGTH_COLUMNS


def test_length_bands_split_short_from_long_executions() -> None:
    rows = [row("corpus", "full", t, True, steps=5) for t in range(3)] + \
        [row("corpus", "full", 10 + t, t == 0, steps=70) for t in range(4)]
    bands = ev.length_bands(frame(rows)).set_index("band")
    assert bands.loc["1-20", "success"] == 1.0 and bands.loc["61-100", "success"] == 0.25
    assert "21-40" not in bands.index


def test_cost_medians_and_their_ratio_to_full() -> None:
    rows = [row("sweissues", "full", t, True, calls=c, tokens=1000 * c) for t, c in enumerate((10, 15, 40))]
    rows += [row("sweissues", "acg", t, True, calls=c, tokens=3000 * c) for t, c in enumerate((20, 30, 31))]
    table = ev.cost_table(ev.eval_rows(frame(rows))).set_index("memory")
    assert table.loc["full", "median_llm_calls"] == 15 and table.loc["acg", "median_llm_calls"] == 30
    assert table.loc["acg", "calls_ratio"] == 2.0 and table.loc["full", "calls_ratio"] == 1.0
    assert table.loc["acg", "tokens_ratio"] == pytest.approx(90000 / 15000)


def test_pass_k_and_seed_spread_need_two_seeds() -> None:
    rows = [row("corpus", "full", t, s == 0 or t == 0, seed=s) for t in range(2) for s in range(3)]
    rows += [row("corpus", "acg", t, True, seed=s) for t in range(2) for s in range(3)]
    table = ev.seed_table(frame(rows)).set_index("memory")
    # full: task 0 passes 3/3, task 1 passes 1/3; per-seed success 1, 0.5, 0.5
    assert table.loc["full", "pass^1"] == pytest.approx(4 / 6)
    assert table.loc["full", "pass^3"] == pytest.approx(0.5)
    assert table.loc["full", "seed_sd"] == pytest.approx(pd.Series([1, 0.5, 0.5]).std())
    assert table.loc["acg", "seed_sd"] == 0.0 and table.loc["acg", "pass^3"] == 1.0
    one_seed = [r for r in rows if r["seed"] == 0]
    assert ev.seed_table(frame(one_seed)).empty


def test_paired_deltas_against_full_carry_the_noise_floor() -> None:
    rows = [row("corpus", m, t, (m == "acg") or t == 0, seed=s) for m in ("full", "acg")
            for t in range(4) for s in range(2)]
    deltas = ev.deltas_vs_full(frame(rows), n_resamples=200, seed=0)
    assert list(deltas.memory) == ["acg"] and deltas.delta.iloc[0] == pytest.approx(0.75)
    assert deltas.pairs.iloc[0] == 8 and deltas.noise_floor.iloc[0] == 0.0
    single = ev.deltas_vs_full(frame([r for r in rows if r["seed"] == 0]), n_resamples=50, seed=0)
    assert math.isnan(single.noise_floor.iloc[0])


def test_figures_draw_one_panel_per_family_and_model() -> None:
    rows = [row(f, m, t, t % 2 == 0, model=model, steps=1 + t % 14, n_hunks=1 + t % 3)
            for f in ("corpus", "sweissues") for m in ("full", "acg") for model in ("sim/mini", "sim/pro")
            for t in range(40)]
    episodes = ev.eval_rows(frame(rows))
    fig = plot_structure(ev.structure_table(episodes, n_resamples=20, seed=0))
    assert fig.axes[0].get_title() == "corpus" and len(fig.axes) == 4 and "SimLM" in fig._suptitle.get_text()
    fig = plot_length(ev.length_curves(episodes))
    assert len(fig.axes) == 4 and len(fig.axes[0].lines) == 2


def test_progress_is_each_familys_graded_measure() -> None:
    rows = pd.DataFrame([
        {"family": "planning", "valid_count": 0, "target": 1, "requirement_pass_rate": 0.75, "parts_correct": None},
        {"family": "corpus", "valid_count": 0, "target": 1, "requirement_pass_rate": None, "parts_correct": 0.25},
        {"family": "corpus", "valid_count": 1, "target": 1, "requirement_pass_rate": None, "parts_correct": None},
        {"family": "sweissues", "valid_count": 2, "target": 4, "requirement_pass_rate": None, "parts_correct": None},
        {"family": "sweissues", "valid_count": 5, "target": 4, "requirement_pass_rate": None, "parts_correct": None},
    ])
    assert ev.progress_share(rows).tolist() == [0.75, 0.25, 1.0, 0.5, 1.0]  # a short question: accepted
    assert ev.progress_share(rows.drop(columns=["parts_correct"])).tolist() == [0.75, 0.0, 1.0, 0.5, 1.0]
