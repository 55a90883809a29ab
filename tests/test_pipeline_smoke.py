"""Smoke run of the whole DVC pipeline (same stages, reduced params) in a temporary copy.

The data stages (snapshots, corpus, manifests@*) take the outputs `make test` has just built with
the same commands (test-data), recorded by `dvc commit`: the copy starts where the suite's own data
are. (Without them, e.g. pytest run alone on a new clone, the copy builds them itself: snapshots
fetched with pip, reduced manifests.) Then `make repro`'s driver (``python -m pushbench.pipeline``)
runs every experiment on two tasks with one seed, aggregates the results, and executes three
notebooks with papermill: the first (calibration) and the ACG ones (07-acg, 09-acg-eval), which must
write every table and figure they promise from these tiny results. `dvc repro` must then report
nothing to do.

One test runs the pipeline once and then every check on that run. (Four tests sharing one copy would
need to run on one xdist worker, and `--dist loadgroup` no longer groups under pytest 9.2:
pytest-dev/pytest-xdist#1386. Split across workers, each checked a copy that had never been run.)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.slow, pytest.mark.network]
NOTEBOOKS = ("00-calibration", "07-acg", "09-acg-eval")  # the first, and the ACG notebooks
# what each ACG notebook promises: tables (CSV + Markdown) and figures (PNG + PDF)
ACG_TABLES = {"07-acg": ["acg_methods", "acg_methods_success", "acg_evidence_recall"],
              "09-acg-eval": ["table1_success", "table1_success_by_method", "table1_average", "table1_average_shared",
                              "fig2_structure", "fig3_length_bands", "cost_calls_tokens", "table2_diagnostics", "table3_continuation",
                              "table3_continuation_failed", "deltas_vs_full", "evidence_recall"]}
# (+ pass_k_seed_spread with >= 2 seeds; the reduced grid has one)
ACG_FIGURES = {"07-acg": ["acg_success_by_method", "acg_recall_vs_length"],
               "09-acg-eval": ["fig2_structure", "fig3_success_vs_length"]}


def tracked_files() -> list[str]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True)
    return [line for line in out.stdout.splitlines() if line]


DATA_STAGES = ("snapshots", "corpus", "manifests@")  # names (or name prefixes) of the stages that build data


def reduce(params: dict, data_built: bool) -> dict:
    # memories stay whole: the ACG notebooks compare every method (full, summary, memgpt, langgraph-store, acg)
    for spec in params["experiments"].values():
        spec.update(seeds=1, limit=2, models=spec["models"][:1], controllers=spec["controllers"][:2])
        spec.pop("tasks", None)  # named tasks may not be in reduced manifests: the split's first two instead
    params["notebooks"] = [n for n in params["notebooks"] if n in NOTEBOOKS]
    if "blackbox" in params:
        params["blackbox"].update(tasks=2, agents=params["blackbox"]["agents"][:1])
    params["stats"]["n_resamples"] = 200
    if "calibration" in params:
        params["calibration"]["repetitions"] = 5
    return params if data_built else reduce_builds(params)


def reduce_builds(params: dict) -> dict:
    """Smaller manifests, for a copy that builds its own data."""
    if "swe" in params:  # its build re-runs every catalogue unit of each repository (uncached): one repository
        params["swe"]["repos"] = {"requests": params["swe"]["repos"]["requests"]}
    if "sweissues" in params:  # its build runs 2^k jailed test runs per issue: one issue per hunk count
        params["sweissues"].update(repos=["requests"], issues={1: 1, 2: 1, 3: 1})
        if "long" in params["sweissues"]:  # one long backlog, from one partition of the units
            params["sweissues"]["long"].update(tasks={"requests": 1}, partitions=1)
    for family in ("planning", "corpus"):  # each long draw is played by sim/perfect at build time: two suffice
        if "long" in params.get(family, {}):
            params[family]["long"]["tasks"] = 2
    return params


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("pipeline")
    for rel in tracked_files():
        source = ROOT / rel
        if source.is_file() and not rel.startswith(("paper_figures/", "dvc.lock")):
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / rel)
    (dest / ".venv").symlink_to(Path(sys.prefix))
    subprocess.run(["git", "init", "-q"], cwd=dest, check=True)
    built = data_outputs(dest)
    data_built = bool(built) and all((ROOT / out).exists() for outs in built.values() for out in outs)
    params = reduce(yaml.safe_load((dest / "params.yaml").read_text()), data_built)
    (dest / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    if data_built:
        take_built_data(dest, built)
    return dest


def data_outputs(copy: Path) -> dict[str, list[str]]:
    """Each data stage of the copy's pipeline with its outputs (paths relative to the copy)."""
    from dvc.repo import Repo

    with Repo(str(copy)) as repo:
        return {stage.name: [str(Path(out.fs_path).relative_to(copy)) for out in stage.outs]
                for stage in repo.index.stages if stage.name.startswith(DATA_STAGES)}


def take_built_data(copy: Path, built: dict[str, list[str]]) -> None:
    """The data stages' outputs as `make test` built them, recorded in the copy's dvc.lock and cache."""
    for out in (out for outs in built.values() for out in outs):
        source, target = ROOT / out, copy / out
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, dirs_exist_ok=True)
        else:
            shutil.copy2(source, target)
    done = dvc(copy, "commit", "--force", *built)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def dvc(copy: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([f"{sys.prefix}/bin/dvc", *args], cwd=copy, env=env_for(copy), capture_output=True, text=True)


def env_for(copy: Path) -> dict[str, str]:
    return {**os.environ, "PATH": f"{sys.prefix}/bin:{os.environ['PATH']}", "PUSHBENCH_ROOT": str(copy)}


def test_the_reduced_pipeline_runs_once_and_passes_every_check(copy: Path) -> None:
    # `make repro`'s driver (stages side by side, dvc.lock as `dvc repro` writes it); `dvc repro` checks it after
    first = subprocess.run([sys.executable, "-m", "pushbench.pipeline"], cwd=copy, env=env_for(copy),
                           capture_output=True, text=True)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    check_every_episode_ran_and_a_second_repro_is_a_noop(copy)
    check_the_acg_notebooks_write_what_they_promise(copy)
    check_a_metric_edit_re_scores_without_re_running_an_episode(copy)
    check_editing_one_family_leaves_the_others_stages_alone(copy)


def check_every_episode_ran_and_a_second_repro_is_a_noop(copy: Path) -> None:
    params = yaml.safe_load((copy / "params.yaml").read_text())
    for name, spec in params["experiments"].items():
        lines = (copy / "data/runs" / name / "episodes.jsonl").read_text().splitlines()
        cells = len(spec["controllers"]) * len(spec["memories"]) * len(spec["models"]) * len(spec["backends"])
        assert len(lines) == tasks_run(copy, spec) * cells * spec["seeds"], name
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


def tasks_run(copy: Path, spec: dict) -> int:
    """limit 2: the split's first two tasks (a reduced build has one long sweissues backlog)."""
    manifest = (copy / "data/manifests" / f"{spec['family']}.jsonl").read_text().splitlines()
    split = [t for t in map(json.loads, manifest) if t["settings"].get("split", "short") == spec.get("split", "short")]
    return min(2, len(split))


def methods_run(params: dict, families: set[str]) -> set[tuple[str, str]]:
    """(family, memory) of every method (a memory under the standard controller, native backend) run."""
    return {(spec["family"], memory) for spec in params["experiments"].values() if spec["family"] in families
            and "standard" in spec["controllers"] and "native" in spec["backends"] for memory in spec["memories"]}


def read_table(folder: Path, name: str, title: str = "SimLM") -> pd.DataFrame:
    """A saved table's rows, once its Markdown caption says whose numbers they are."""
    caption = (folder / f"{name}.md").read_text(encoding="utf-8").splitlines()[0]
    assert title in caption, (name, caption)
    return pd.read_csv(folder / f"{name}.csv")


def check_the_acg_notebooks_write_what_they_promise(copy: Path) -> None:
    """Every file each ACG notebook promises, from the reduced grid."""
    params = yaml.safe_load((copy / "params.yaml").read_text())
    for notebook in ACG_TABLES:
        folder = copy / "paper_figures" / notebook
        assert (copy / "data/notebooks" / f"{notebook}.ipynb").is_file()
        promised = {f"{t}.{e}" for t in ACG_TABLES[notebook] for e in ("csv", "md")}
        promised |= {f"{f}.{e}" for f in ACG_FIGURES[notebook] for e in ("png", "pdf")}
        assert {p.name for p in folder.iterdir()} == promised, notebook  # one seed: no pass^k table
        for figure in ACG_FIGURES[notebook]:
            assert (folder / f"{figure}.png").read_bytes()[:4] == b"\x89PNG"
            assert (folder / f"{figure}.pdf").read_bytes()[:5] == b"%PDF-"
    acg = copy / "paper_figures/07-acg"
    methods = read_table(acg, "acg_methods")
    assert set(zip(methods.family, methods.memory)) == methods_run(params, {"reposcan", "dataops", "swe"})
    assert set(methods.model) == {params["experiments"]["reposcan-acg"]["models"][0]} and (methods.episodes == 2).all()
    recall = read_table(acg, "acg_evidence_recall", title="no model")  # replayed traces: model-free
    families = {params["experiments"][run]["family"] for run in params["recall"]["runs"]}
    assert set(zip(recall.family, recall.memory)) == {(f, m) for f in families for m in params["recall"]["memories"]}
    assert (recall.decisions > 0).all()
    evaluation = copy / "paper_figures/09-acg-eval"
    table1 = read_table(evaluation, "table1_success")
    assert set(zip(table1.family, table1.memory)) == methods_run(params, {"planning", "corpus", "sweissues"})
    assert (table1.tasks == 2).all() and table1["rank"].between(1, 5).all()
    assert read_table(evaluation, "deltas_vs_full").noise_floor.isna().all()  # one seed: no noise floor
    for name in set(ACG_TABLES["09-acg-eval"]) - {"table1_success", "deltas_vs_full"}:
        read_table(evaluation, name)


def stale_stages(copy: Path) -> dict:
    """`dvc status`: each stale stage with what changed in it."""
    status = dvc(copy, "status", "--json")
    assert status.returncode == 0, status.stderr[-2000:]
    return json.loads(status.stdout or "{}")


def stale_after_editing(copy: Path, rel: str) -> set[str]:
    """The stages `dvc status` finds changed after a comment is appended to ``rel`` (then undone).
    The copy is current before each edit: `dvc repro` found nothing to do, and the first edit's
    undo is checked to leave nothing stale (each `dvc status` takes seconds)."""
    path = copy / rel
    original = path.read_bytes()
    path.write_bytes(original + b"\n# an edit\n")
    try:
        return set(stale_stages(copy))
    finally:
        path.write_bytes(original)


def check_a_metric_edit_re_scores_without_re_running_an_episode(copy: Path) -> None:
    experiments = yaml.safe_load((copy / "params.yaml").read_text())["experiments"]
    stale = stale_after_editing(copy, "src/pushbench/scoring/metrics.py")
    # black-box rows and the forks are scored too
    assert stale == {f"score@{name}" for name in experiments} | {"blackbox", "forks"}
    assert dvc(copy, "status", "--json").stdout.strip() in ("", "{}")  # undone: nothing stale


def check_editing_one_family_leaves_the_others_stages_alone(copy: Path) -> None:
    experiments = yaml.safe_load((copy / "params.yaml").read_text())["experiments"]
    swe = {name for name, spec in experiments.items() if spec["family"] == "swe"}
    stale = stale_after_editing(copy, "src/pushbench/tasks/swe/runs.py")
    recall = {"recall"}  # it replays the swe-acg traces through SWE-lite environments (origins)
    reuse = {"manifests@sweissues"}  # structured SWE issues are built from SWE-lite's catalogue and runs
    assert stale == {"manifests@swe", *(f"runs@{n}" for n in swe), *(f"score@{n}" for n in swe)} | recall | reuse
    assert stale_after_editing(copy, "src/pushbench/tasks/rows/family.py") == set()  # not in the pipeline
