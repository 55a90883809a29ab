"""A new pinned repository grows RepoScan and SWE-lite mining by configuration alone.

click 8.1.7 (a small pinned sdist) is added to a copy of the snapshot lock and to the families'
params; no code changes. RepoScan builds its tasks with objectives that name it, and SWE-lite mining
finds units in it from the (module, test file) pairs derived from its tree.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from pushbench import config
from pushbench.snapshots import fetch_all
from pushbench.tasks import get_family
from pushbench.tasks.swe.units import mine, mining_pairs

pytestmark = [pytest.mark.network, pytest.mark.slow]
CLICK = {"package": "click", "version": "8.1.7",
         "sha256": "ca9853ad459e787e2192211578cc907e7594e294c7ccc834310722b41b9ca6de"}


@pytest.fixture(scope="module")
def snapshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A snapshot root with click fetched through a lock that adds it (and the pinned pytest, SWE-lite's runner)."""
    if not (config.SNAPSHOT_SRC / "pytest").is_dir():
        pytest.skip("SWE-lite runs tests with the pinned pytest snapshot: run `pushbench snapshots fetch`")
    root = tmp_path_factory.mktemp("snapshots")
    lock = yaml.safe_load(config.SNAPSHOT_LOCK.read_text(encoding="utf-8"))
    (root / "lock.yaml").write_text(yaml.safe_dump({**lock, "click": CLICK}), encoding="utf-8")
    fetch_all(root / "lock.yaml", root / "src", only=["click"])
    shutil.copytree(config.SNAPSHOT_SRC / "pytest", root / "src" / "pytest", symlinks=True)
    return root / "src"


def test_reposcan_builds_tasks_on_a_configured_repository(snapshots: Path) -> None:
    params = config.params("reposcan")
    params = {**params, "repos": {"click": {"fixture": "runner", "calls": "runner.invoke"}}}
    tasks = get_family("reposcan").build(params, snapshot_root=snapshots)
    assert len(tasks) == 3 * len(params["targets"])
    assert all(t.spec.repo == "click" and "`click` repository" in t.spec.objective for t in tasks)
    assert all(len(t.hidden["valid"]) >= params["min_valid"] for t in tasks)


def test_swe_lite_mines_units_from_a_configured_repository(snapshots: Path) -> None:
    pairs = mining_pairs(snapshots / "click", [])
    assert ("src/click/parser.py", "tests/test_parser.py") in pairs and len(pairs) >= 5
    swe = config.params("swe")
    units = mine(int(config.params("seed")), 1, swe["max_rank"], 3, 1, {"click": []}, workers=1,
                 snapshot_root=snapshots)
    assert units and all(u.repo == "click" and u.unit.startswith("click-") for u in units)
    assert all(u.path.startswith("src/click/") and u.tests and u.tests[0].startswith("tests/") for u in units)


def test_the_corpus_grows_with_a_configured_repositorys_docs_and_releases(snapshots: Path) -> None:
    from pushbench.tasks.corpus.build import build_corpus
    from pushbench.tasks.corpus.family import objective_text

    params = {**config.params("corpus"), "projects": ["click"]}
    docs = build_corpus(params, snapshot_root=snapshots)
    kinds = {d.kind for d in docs}
    releases = {d.meta["version"] for d in docs if d.kind == "changelog"}
    assert {"docs", "docstring", "changelog"} <= kinds and all(d.project == "click" for d in docs)
    assert "8.1.7" in releases and len(releases) >= 20  # click's "Version X / Released DATE" changelog
    dated = [d for d in docs if d.kind == "changelog" and d.meta["version"] == "8.1.7"]
    assert dated and all(d.meta["date"] == "2023-08-17" for d in dated)
    assert "of click that" in objective_text(["x"], 5, 100, "release", ["click"])
