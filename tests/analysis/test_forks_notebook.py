"""The 08-forks notebook executes on a small synthetic fork run and writes its tables (CSV +
Markdown, titled as SimLM) and figure; its numbers are the fork table's."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from pushbench.analysis.forks import fork_table
from pushbench.analysis.notebooks import execute

ROOT = Path(__file__).resolve().parents[2]


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows), encoding="utf-8")


def test_the_forks_notebook_writes_the_rescue_table(tmp_path: Path) -> None:
    grid, forks = [], []
    for model in ("sim/mini", "sim/base"):
        for t in range(4):
            for controller in ("standard", "stateqgp"):
                ok = controller == "stateqgp" and t != 0
                grid.append({"experiment": "reposcan-main", "family": "reposcan", "task_id": f"t{t}", "seed": 0,
                             "model": model, "memory": "full", "controller": controller, "backend": "native",
                             "success": ok, "valid_count": 50 if ok else 20, "target": 50})
            for at, step in (("25%", 5), ("50%", 10), ("75%", 15)):
                parent = f"t{t}|standard|full|{model}|native|s0"
                forks.append({"episode_id": f"t{t}|stateqgp|full|{model}|native|s0|fork@{step}<standard|full|{model}",
                              "parent": parent, "fork_at": at, "fork_step": step, "task_id": f"t{t}", "seed": 0,
                              "model": model, "memory": "full", "controller": "stateqgp", "family": "reposcan",
                              "success": t >= (1 if at == "25%" else 2), "valid_count": 40 + t})
    write_jsonl(tmp_path / "results/episodes.jsonl", grid)
    write_jsonl(tmp_path / "forks/scored.jsonl", forks)
    figures = tmp_path / "figures"
    execute("08-forks", {"results": str(tmp_path / "results"), "figures": str(figures),
                         "forks": str(tmp_path / "forks"), "n_resamples": 200},
            out_dir=tmp_path / "notebooks", source_dir=ROOT / "notebooks")
    assert {p.name for p in figures.iterdir()} >= {"forks_rescue.csv", "forks_rescue.md", "forks_rescue.png",
                                                   "forks_fresh.csv", "forks_fresh.md"}
    assert all("SimLM" in p.read_text() for p in figures.glob("*.md"))
    saved = pd.read_csv(figures / "forks_rescue.csv", dtype={"fork_at": str})
    expected = fork_table(pd.DataFrame(forks), 200, 0)
    assert sorted(zip(saved.model, saved.fork_at, saved.forks, saved.rescued)) == \
        sorted(zip(expected.model, expected.fork_at, expected.forks, expected.rescued))
    assert list(saved[saved.model == "sim/mini"].rescue_rate) == [0.75, 0.5, 0.5]
    fresh = pd.read_csv(figures / "forks_fresh.csv")
    assert list(fresh.failed) == [4, 4] and list(fresh.share) == [0.75, 0.75]  # stateqgp fails on t0 only
