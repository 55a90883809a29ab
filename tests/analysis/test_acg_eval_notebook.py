"""The 09-acg-eval notebook executes on a small synthetic results file (three families, two
models, two methods, two seeds) and writes every table (CSV + Markdown, titled as SimLM) and both
figures (PNG + PDF); its Table 1 is the library's."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from pushbench.analysis import acg_eval as ev
from pushbench.analysis.notebooks import execute

ROOT = Path(__file__).resolve().parents[2]
STRUCT = {"planning": lambda t: {"planning_kind": ("shopping", "travel")[t % 2], "level": 1 + t % 3},
          "corpus": lambda t: {"n_clues": 2 + t % 3}, "sweissues": lambda t: {"n_hunks": 1 + t % 3}}
TASKS = 36


def episode(family: str, model: str, memory: str, task: int, seed: int) -> dict:
    ok = (task + seed + (memory == "acg") + (model == "sim/pro")) % 3 == 0
    steps = 5 + (task * 7) % 40
    rejected = task % 4 == 0
    return {"experiment": f"{family}-grid", "family": family, "model": model, "memory": memory,
            "controller": "standard", "backend": "native", "task_id": f"{family}-{task:02d}", "seed": seed,
            "success": ok, "target": 1, "steps": steps, "llm_calls": steps + (memory == "acg"),
            "input_tokens": 900 * steps, "output_tokens": 60 * steps, "interface_rejections": int(rejected),
            "precondition_rejections": 0, "budget_exhausted": False, "repetition": task % 5 == 0,
            "repetition_period": 1 if task % 5 == 0 else None, "deliverable_present": ok or task % 2 == 0,
            "delivered_but_failed": (not ok) and task % 2 == 0, "rejection_episode": rejected,
            "rejection_resumed": True if rejected else None, "rejection_delay": 1 if rejected else None,
            **STRUCT[family](task)}


def test_the_acg_eval_notebook_writes_every_table_and_figure(tmp_path: Path) -> None:
    rows = [episode(f, m, k, t, s) for f in ev.FAMILIES for m in ("sim/mini", "sim/pro") for k in ("full", "acg")
            for t in range(TASKS) for s in range(2)]
    results = tmp_path / "results"
    results.mkdir()
    (results / "episodes.jsonl").write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows), "utf-8")
    recall = [{"run": f"{f}-run", "family": f, "memory": m, "bucket": "1-20", "first_action": 1, "decisions": 3,
               "needed": 4, "recalled": 2 + (m == "full"), "share": None, "budget": 4000}
              for f in ["reposcan", *ev.FAMILIES] for m in ("full", "acg")]
    (results / "recall.jsonl").write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in recall), "utf-8")
    figures = tmp_path / "figures"
    execute("09-acg-eval", {"results": str(results), "figures": str(figures), "n_resamples": 100},
            out_dir=tmp_path / "notebooks", source_dir=ROOT / "notebooks")
    tables = ["table1_success", "table1_average", "table1_average_shared", "fig2_structure", "fig3_length_bands", "cost_calls_tokens",
              "table2_diagnostics", "table3_continuation", "table3_continuation_failed", "deltas_vs_full",
              "pass_k_seed_spread"]
    names = {p.name for p in figures.iterdir()}
    assert names >= {f"{t}.{e}" for t in tables for e in ("csv", "md")}
    assert names >= {f"{f}.{e}" for f in ("fig2_structure", "fig3_success_vs_length") for e in ("png", "pdf")}
    assert all("SimLM" in p.read_text(encoding="utf-8") for p in figures.glob("*.md"))
    saved = pd.read_csv(figures / "table1_success.csv")
    expected = ev.success_table(ev.eval_rows(pd.DataFrame(rows)), 100, 0)
    assert sorted(zip(saved.family, saved.model, saved.memory, saved["rank"])) == \
        sorted(zip(expected.family, expected.model, expected.memory, expected["rank"]))
    assert (saved.success.round(4) == expected.set_index(ev.GROUP).loc[
        list(zip(saved.family, saved.model, saved.memory))].success.round(4).to_numpy()).all()
    spread = pd.read_csv(figures / "pass_k_seed_spread.csv")
    assert len(spread) == 12 and {"pass^1", "pass^2", "seed_sd"} <= set(spread.columns)
    assert pd.read_csv(figures / "deltas_vs_full.csv").noise_floor.notna().all()
    evidence = pd.read_csv(figures / "evidence_recall.csv")  # the recall stage's rows of these families only
    assert list(evidence.family) == [f for f in ["sweissues", "planning", "corpus"] for _ in range(2)]
    assert list(evidence.evidence_recall[:2]) == [0.75, 0.5]
