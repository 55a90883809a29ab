"""Smoke run of the whole DVC pipeline (same stages, reduced params) in a temporary copy.

Snapshots are fetched with pip (the one network use), manifests built, every experiment run on two
tasks with one seed, results aggregated, and one notebook executed by papermill. A second
`dvc repro` must then report nothing to do.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.slow, pytest.mark.network]
NOTEBOOKS = ("00-calibration", "07-acg", "09-acg-eval")  # the first, and the ACG notebooks


def tracked_files() -> list[str]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True)
    return [line for line in out.stdout.splitlines() if line]


def reduce(params: dict) -> dict:
    for spec in params["experiments"].values():
        spec.update(seeds=1, limit=2, models=spec["models"][:1], controllers=spec["controllers"][:2])
    params["notebooks"] = [n for n in params["notebooks"] if n in NOTEBOOKS]
    if "blackbox" in params:
        params["blackbox"].update(tasks=2, agents=params["blackbox"]["agents"][:1])
    params["stats"]["n_resamples"] = 200
    if "calibration" in params:
        params["calibration"]["repetitions"] = 5
    if "sweissues" in params:  # its build runs 2^k jailed test runs per issue: one issue per hunk count
        params["sweissues"].update(repos=["requests"], issues={1: 1, 2: 1, 3: 1})
    return params


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("pipeline")
    for rel in tracked_files():
        source = ROOT / rel
        if source.is_file() and not rel.startswith(("paper_figures/", "dvc.lock")):
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / rel)
    params = reduce(yaml.safe_load((dest / "params.yaml").read_text()))
    (dest / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    (dest / ".venv").symlink_to(Path(sys.prefix))
    subprocess.run(["git", "init", "-q"], cwd=dest, check=True)
    return dest


def dvc(copy: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{sys.prefix}/bin:{os.environ['PATH']}", "PUSHBENCH_ROOT": str(copy)}
    return subprocess.run([f"{sys.prefix}/bin/dvc", *args], cwd=copy, env=env, capture_output=True, text=True)


def test_pipeline_runs_end_to_end_and_is_a_noop_the_second_time(copy: Path) -> None:
    first = dvc(copy, "repro")
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    params = yaml.safe_load((copy / "params.yaml").read_text())
    for name, spec in params["experiments"].items():
        lines = (copy / "data/runs" / name / "episodes.jsonl").read_text().splitlines()
        cells = len(spec["controllers"]) * len(spec["memories"]) * len(spec["models"]) * len(spec["backends"])
        assert len(lines) == 2 * cells * spec["seeds"], name  # limit 2 tasks
    notebook = params["notebooks"][0]
    assert (copy / "data/notebooks" / f"{notebook}.ipynb").is_file()
    produced = sorted(p.name for p in (copy / "paper_figures" / notebook).iterdir())
    assert any(name.endswith(".md") for name in produced) and any(name.endswith(".csv") for name in produced)
    text = "".join(p.read_text() for p in (copy / "paper_figures" / notebook).glob("*.md"))
    assert "SimLM" in text
    second = dvc(copy, "repro")
    assert second.returncode == 0
    assert "Data and pipelines are up to date" in second.stdout, second.stdout[-2000:]
    # forced reruns write the same bytes (no wall times in traces, no random notebook cell ids)
    lock = (copy / "dvc.lock").read_text()
    experiment = next(iter(params["experiments"]))
    forced = dvc(copy, "repro", "-f", "-s", f"runs@{experiment}", f"notebooks@{notebook}")
    assert forced.returncode == 0, forced.stdout[-2000:] + forced.stderr[-2000:]
    assert (copy / "dvc.lock").read_text() == lock


def stale_after_editing(copy: Path, rel: str) -> set[str]:
    """The stages `dvc status` finds changed after a comment is appended to ``rel`` (then undone)."""
    path = copy / rel
    original = path.read_bytes()
    path.write_bytes(original + b"\n# an edit\n")
    try:
        status = dvc(copy, "status", "--json")
        assert status.returncode == 0, status.stderr[-2000:]
        return set(json.loads(status.stdout or "{}"))
    finally:
        path.write_bytes(original)


def test_a_metric_edit_re_scores_without_re_running_an_episode(copy: Path) -> None:
    experiments = yaml.safe_load((copy / "params.yaml").read_text())["experiments"]
    stale = stale_after_editing(copy, "src/pushbench/scoring/metrics.py")
    # black-box rows and the forks are scored too
    assert stale == {f"score@{name}" for name in experiments} | {"blackbox", "forks"}
    assert dvc(copy, "status", "--json").stdout.strip() in ("", "{}")  # undone: nothing stale


def test_editing_one_family_leaves_the_others_stages_alone(copy: Path) -> None:
    experiments = yaml.safe_load((copy / "params.yaml").read_text())["experiments"]
    swe = {name for name, spec in experiments.items() if spec["family"] == "swe"}
    stale = stale_after_editing(copy, "src/pushbench/tasks/swe/runs.py")
    recall = {"recall"}  # it replays the swe-acg traces through SWE-lite environments (origins)
    reuse = {"manifests@sweissues"}  # structured SWE issues are built from SWE-lite's catalogue and runs
    assert stale == {"manifests@swe", *(f"runs@{n}" for n in swe), *(f"score@{n}" for n in swe)} | recall | reuse
    assert stale_after_editing(copy, "src/pushbench/tasks/rows/family.py") == set()  # not in the pipeline
