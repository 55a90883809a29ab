"""The ACG notebooks' analysis on degenerate input (the pipeline smoke test's tiny grids: one or two
tasks, one seed, methods or families missing, no replayed decisions): empty tables keep their
columns, figures with nothing to draw say why, nothing raises."""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from pushbench.analysis import acg
from pushbench.analysis import acg_eval as ev
from pushbench.analysis.acg_eval_figures import plot_length, plot_structure
from pushbench.analysis.diagnostics import TABLE3_COLUMNS, continuation_table, table2

STRUCT = {"planning": {"planning_kind": "shopping", "level": 1}, "corpus": {"n_clues": 2}, "sweissues": {"n_hunks": 1}}
NOTEBOOK_07_COLUMNS = ["family", "model", "memory", "success", "success_sd", "median_llm_calls", "median_tokens",
                       "evidence_recall", "episodes", "flag"]  # what notebook 07 saves of the method table


def row(family: str, memory: str, task: int, success: bool, model: str = "sim/mini", seed: int = 0) -> dict:
    return {"family": family, "model": model, "memory": memory, "controller": "standard", "backend": "native",
            "task_id": f"{family}-{task}", "seed": seed, "success": success, "target": 1, "steps": 5 + task,
            "llm_calls": 6 + task, "input_tokens": 900, "output_tokens": 100, "false_completion": False,
            "interface_rejections": 0, "precondition_rejections": 0, "budget_exhausted": False, "repetition": False,
            "deliverable_present": success, "delivered_but_failed": False, "rejection_episode": False,
            "rejection_resumed": None, "rejection_delay": None, **STRUCT.get(family, {})}


def texts(fig: plt.Figure) -> list[str]:
    out = [t.get_text() for ax in fig.axes for t in ax.texts]
    plt.close(fig)
    return out


def tiny() -> pd.DataFrame:
    """Two tasks, one seed: sweissues runs full and acg, planning every method, corpus no ``full``."""
    rows = [row("sweissues", m, t, t == 0) | {"n_hunks": 1 + t} for m in ("full", "acg") for t in range(2)]
    rows += [row("planning", m, t, t == 1) for m in acg.METHODS for t in range(2)]
    rows += [row("corpus", m, t, False) for m in ("memgpt", "acg") for t in range(2)]
    return ev.eval_rows(pd.DataFrame(rows))


def test_the_method_table_without_episodes_keeps_the_columns_notebook_07_saves() -> None:
    episodes = acg.method_rows(pd.DataFrame([row("planning", "acg", 0, True)]))  # not a 07 family
    assert episodes.empty
    table = acg.with_recall(acg.method_table(episodes, 50, 0), acg.load_recall("no-such-results"))
    assert table.empty and set(NOTEBOOK_07_COLUMNS) <= set(table.columns)
    recall = pd.DataFrame([{"run": "r", "family": "swe", "memory": "acg", "bucket": 0, "first_action": 1,
                            "decisions": 3, "needed": 2, "recalled": 1, "share": 0.5}])
    assert set(NOTEBOOK_07_COLUMNS) <= set(acg.with_recall(acg.method_table(episodes, 50, 0), recall).columns)
    assert texts(acg.plot_methods(table)) == ["no episodes under the standard controller"]


def test_no_replayed_decisions_give_empty_recall_tables_and_a_figure_saying_so() -> None:
    recall = acg.load_recall("no-such-results")
    assert list(acg.recall_table(recall).columns) == ["family", "memory", "decisions", "needed", "recalled",
                                                     "evidence_recall"]
    curve = acg.recall_curve(recall)
    assert curve.empty and {"history_events", "recall"} <= set(curve.columns)
    fig = acg.plot_recall_vs_length(curve)
    assert fig.axes[0].get_legend() is None
    assert texts(fig) == ["no replayed decisions"]


def test_a_decision_needing_no_evidence_has_no_recall_rather_than_a_division_by_zero(tmp_path: Path) -> None:
    lines = [{"run": "r", "family": "swe", "memory": m, "bucket": 0, "first_action": 1, "decisions": 2,
              "needed": n, "recalled": n, "share": None} for m, n in (("acg", 0), ("full", 3))]
    pd.DataFrame(lines).to_json(tmp_path / "recall.jsonl", orient="records", lines=True)
    table = acg.recall_table(acg.load_recall(str(tmp_path))).set_index("memory")
    assert math.isnan(table.loc["acg", "evidence_recall"]) and table.loc["full", "evidence_recall"] == 1.0
    episodes = acg.method_rows(pd.DataFrame([row("swe", m, t, t == 0) for m in ("full", "acg") for t in range(2)]))
    methods = acg.with_recall(acg.method_table(episodes, 50, 0), acg.load_recall(str(tmp_path))).set_index("memory")
    assert methods.loc["full", "evidence_recall"] == 1.0 and math.isnan(methods.loc["acg", "evidence_recall"])
    assert list(methods.episodes) == [2, 2] and (methods.success == 0.5).all()


def test_every_table_of_notebook_09_on_no_episodes_is_empty_with_its_columns() -> None:
    none = ev.eval_rows(pd.DataFrame([row("planning", "acg", 0, True)]).iloc[:0])
    table1 = ev.success_table(none, 50, 0)
    assert list(table1.columns) == [*ev.GROUP, "success", "success_sd", "tasks", "episodes", "rank", "flag"]
    assert list(ev.average_table(table1, ev.shared_families(table1)).columns) == \
        ["model", "memory", "families", "average_success", "average_sd", "first_in", "rank"]
    assert list(ev.structure_table(none, 50, 0).columns)[-5:] == ["ci_low", "ci_high", "tasks", "episodes", "flag"]
    assert list(ev.length_curves(none).columns) == ev.LENGTH_COLUMNS
    assert {"band", "success", "episodes"} <= set(ev.length_bands(none).columns)
    assert {"calls_ratio", "tokens_ratio"} <= set(ev.cost_table(none).columns)
    assert "outcome" in ev.ordered(table2(none), ["outcome"]).columns
    assert list(ev.ordered(continuation_table(none)).columns) == TABLE3_COLUMNS
    assert list(ev.deltas_vs_full(none, 50, 0).columns) == [*ev.GROUP, "delta", "ci_low", "ci_high", "pairs",
                                                           "noise_floor"]
    assert all(t.empty for t in (table1, ev.seed_table(none), ev.cost_table(none), ev.length_bands(none)))
    assert texts(plot_structure(ev.structure_table(none, 50, 0))) == ["no episodes of planning, corpus, sweissues"]
    assert texts(plot_length(ev.length_curves(none), none)) == ["no episodes of planning, corpus, sweissues"]


def test_two_tasks_one_seed_and_missing_methods_give_tables_not_errors() -> None:
    episodes = tiny()
    table1 = ev.success_table(episodes, 50, 0)
    assert set(table1.family) == {"planning", "corpus", "sweissues"} and (table1.tasks == 2).all()
    planning = table1[table1.family == "planning"]
    assert (planning.success == 0.5).all() and (planning["rank"] == 1).all() and (planning.success_sd > 0).all()
    assert list(ev.average_table(table1).memory) == ["acg"]  # the one method run on all three families
    assert ev.shared_families(table1) == ["planning"]
    deltas = ev.deltas_vs_full(episodes, 50, 0)
    assert set(deltas.family) == {"planning", "sweissues"}  # corpus has no `full` to compare with
    assert deltas.noise_floor.isna().all() and (deltas.pairs == 2).all()
    cost = ev.cost_table(episodes).set_index(["family", "memory"])
    assert cost.loc[("corpus", "acg"), ["calls_ratio", "tokens_ratio"]].isna().all()
    assert cost.loc[("sweissues", "full"), "calls_ratio"] == 1.0
    assert ev.seed_table(episodes).empty  # one seed: no pass^k, no seed spread
    structure = ev.structure_table(episodes, 50, 0)
    single = structure[structure.family == "sweissues"]  # one task per hunk group: a point, not a bootstrap
    assert list(single.structure) == ["1 hunk", "2 hunks"] * 2 and (single.tasks == 1).all()
    assert ((single.ci_low == single.success) & (single.ci_high == single.success)).all()
    failed = ev.ordered(continuation_table(episodes[~episodes.success.astype(bool)]))
    assert (failed.rejection_episodes == 0).all() and failed.resumed_share.isna().all()


def test_fig3_says_which_panels_reach_no_segment_and_which_did_not_run() -> None:
    episodes = tiny()
    curves = ev.length_curves(episodes)
    assert curves.empty
    fig = plot_length(curves, episodes)
    assert [ax.get_title() for ax in fig.axes] == ["planning", "corpus", "sweissues"]
    assert texts(fig) == [f"no segment reaches {ev.MIN_SEGMENT_TASKS} tasks"] * 3
    other = pd.concat([episodes, ev.eval_rows(pd.DataFrame([row("corpus", m, t, True, model="sim/pro")
                                                             for m in ("full", "acg") for t in range(40)]))])
    fig = plot_length(ev.length_curves(other), other)
    said = texts(fig)  # sim/pro ran corpus only, on 40 tasks: its corpus panel draws curves
    assert said.count("not run") == 2 and said.count(f"no segment reaches {ev.MIN_SEGMENT_TASKS} tasks") == 3
    assert len(said) == 5


def test_fig2_marks_a_panel_whose_model_did_not_run_the_family() -> None:
    rows = [row("corpus", m, t, t == 0, model=model) for m in ("full", "acg") for t in range(2)
            for model in ("sim/mini", "sim/pro")] + [row("sweissues", "acg", 0, True)]
    fig = plot_structure(ev.structure_table(ev.eval_rows(pd.DataFrame(rows)), 50, 0))
    assert len(fig.axes) == 4 and texts(fig) == ["not run"]  # sim/pro on sweissues
