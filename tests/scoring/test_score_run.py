"""`pushbench score RUN_DIR`: every metric from the traces, so a new metric re-scores old runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pushbench import config
from pushbench.cli import app
from pushbench.runner import Grid, run_grid
from pushbench.scoring import ScoringError, score_run
from pushbench.tasks import get_family
from pushbench.tasks.base import write_manifest

from agentkit import all_tasks


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> tuple[Path, Path]:
    manifests = tmp_path_factory.mktemp("manifests")
    write_manifest(manifests / "reposcan.jsonl", [t for t in all_tasks() if t.repo == "requests"][:2])
    out = tmp_path_factory.mktemp("run")
    grid = Grid("reposcan", ["standard", "stateqgp"], ["sim/mini"], ["full"], ["native"], 1,
                master_seed=int(config.params("seed")))
    run_grid(grid, out, progress=False, manifest_root=manifests)
    return out, manifests


def test_scoring_twice_writes_the_same_bytes_and_a_summary(run_dir) -> None:
    out, manifests = run_dir
    first = score_run(out, manifests).read_bytes()
    (out / "scored.jsonl").unlink()
    assert score_run(out, manifests).read_bytes() == first
    summary = json.loads((out / "summary.json").read_text())
    assert {r["controller"] for r in summary} == {"standard", "stateqgp"}


def test_a_new_metric_reaches_an_existing_run_without_running_an_episode(run_dir, monkeypatch) -> None:
    out, manifests = run_dir
    raw, traces = (out / "episodes.jsonl").read_bytes(), sorted(p.stat().st_mtime_ns for p in (out / "traces").iterdir())
    family = get_family("reposcan")
    hook = family.episode_metrics
    monkeypatch.setattr(family, "episode_metrics",
                        lambda events, task: {**hook(events, task), "submit_calls": sum(
                            e["kind"] == "call" and e["tool"] == "submit" for e in events)})
    rows = [json.loads(line) for line in score_run(out, manifests).read_text().splitlines()]
    assert all(r["submit_calls"] >= 1 for r in rows)  # every episode submitted at least once
    assert (out / "episodes.jsonl").read_bytes() == raw  # the run itself is untouched
    assert sorted(p.stat().st_mtime_ns for p in (out / "traces").iterdir()) == traces


def test_the_cli_scores_a_folder_and_says_clearly_what_is_missing(run_dir, tmp_path: Path) -> None:
    out, manifests = run_dir
    result = CliRunner().invoke(app, ["score", str(out), "--manifests", str(manifests)])
    assert result.exit_code == 0, result.output
    assert (out / "scored.jsonl").is_file()
    assert result.stderr.startswith("re-scored ") and " episodes of " in result.stderr  # what it re-scored
    assert "\n|:--" in result.stdout  # Markdown off a terminal
    rich = CliRunner().invoke(app, ["score", str(out), "--manifests", str(manifests), "--format", "rich"])
    assert rich.exit_code == 0 and "┏" in rich.output
    empty = CliRunner().invoke(app, ["score", str(tmp_path)])
    assert empty.exit_code == 1 and empty.output.startswith("error: no episodes at")
    assert len(empty.output.splitlines()) == 1
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "episodes.jsonl").write_text((out / "episodes.jsonl").read_text().splitlines()[0] + "\n")
    with pytest.raises(ScoringError, match="no trace at"):
        score_run(broken, manifests)
