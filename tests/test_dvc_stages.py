"""dvc.yaml agrees with params.yaml where DVC cannot derive one from the other, and every stage
depends on what it reads: no whole data folder, no other family's code."""

from __future__ import annotations

from pathlib import Path

import yaml

from pushbench.analysis.aggregate import BLACKBOX

ROOT = Path(__file__).resolve().parents[1]


def stages() -> dict:
    return yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]


def params() -> dict:
    return yaml.safe_load((ROOT / "params.yaml").read_text())


def deps(stage: dict) -> list[str]:
    return list((stage.get("do") or stage).get("deps") or [])


def test_aggregate_depends_on_the_scored_rows_of_every_run() -> None:
    """aggregate reads each experiment's scored.jsonl and the black-box rows; naming those files
    (not data/runs, whose tens of thousands of traces DVC would hash) keeps every run a dependency."""
    config = params()
    wanted = {f"data/runs/{name}/scored.jsonl" for name in config["experiments"]}
    if "blackbox" in config:
        wanted.add(f"data/runs/{BLACKBOX}/episodes.jsonl")
    assert wanted == {d for d in deps(stages()["aggregate"]) if d.startswith("data/")}


def test_the_viewer_depends_on_each_run_and_the_tasks_of_their_families() -> None:
    """The viewer reads each experiment's run folder and the forks', and builds environments of
    their tasks; naming them (not data/manifests or data/hidden) keeps a family outside the
    pipeline (the example `rows`, which `make test` builds) from touching it."""
    config = params()
    families = {spec["family"] for spec in config["experiments"].values()}
    wanted = {f"data/runs/{name}" for name in config["experiments"]} | {"data/runs/forks"}
    wanted |= {f"data/manifests/{f}.jsonl" for f in families} | {f"data/hidden/{f}" for f in families}
    assert wanted == {d for d in deps(stages()["viewer"]) if d.startswith("data/")}


def test_recall_depends_on_its_configured_runs_and_their_families() -> None:
    config = params()
    runs = config["recall"]["runs"] + (config["recall"].get("sweep") or {}).get("runs", [])  # the window sweep's too
    families = {config["experiments"][run]["family"] for run in runs}
    listed = set(deps(stages()["recall"]))
    wanted = {f"data/runs/{run}/{part}" for run in runs for part in ("episodes.jsonl", "traces")}
    wanted |= {f"data/manifests/{f}.jsonl" for f in families}
    assert wanted == {d for d in listed if d.startswith(("data/runs/", "data/manifests/"))}
    assert {f"src/pushbench/tasks/{f}" for f in families} == {d for d in listed if d.startswith("src/pushbench/tasks/")
                                                              and d.count("/") == 3 and not d.endswith(".py")}


def test_no_stage_depends_on_a_whole_data_folder_or_every_family() -> None:
    """A folder that gathers every family's files (or a run nobody configured) makes a stage stale
    whenever any of them changes."""
    whole = {"data", "data/manifests", "data/hidden", "data/runs", "data/results", "src", "src/pushbench",
             "src/pushbench/tasks"}
    for name, stage in stages().items():
        found = {d.rstrip("/") for d in deps(stage)} & whole
        assert not found, f"{name} depends on {', '.join(sorted(found))}"


def test_each_family_stage_depends_on_its_own_subpackage_only() -> None:
    """manifests, runs and score depend on the shared bases and ${key}'s / ${item.family}'s subpackage."""
    for name in ("manifests", "runs", "score"):
        family_deps = [d for d in deps(stages()[name]) if d.startswith("src/pushbench/tasks/")
                       and d not in ("src/pushbench/tasks/__init__.py", "src/pushbench/tasks/base.py",
                                     "src/pushbench/tasks/manifests.py")]
        assert family_deps == ["src/pushbench/tasks/${key}" if name == "manifests" else
                               "src/pushbench/tasks/${item.family}"], name
