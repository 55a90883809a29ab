"""A small real run (SimLM on two RepoScan tasks, two controllers, two memories) and its viewer."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentkit import data_missing
from pushbench import config


@pytest.fixture(scope="session")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    reason = data_missing()
    if reason:
        pytest.skip(reason)
    from pushbench.runner import Grid, run_grid
    from pushbench.scoring import score_run

    out = tmp_path_factory.mktemp("viewer") / "small"
    grid = Grid("reposcan", ["standard", "gated"], ["sim/mini"], ["full", "memgpt"], ["native"], 1, [10], 2,
                int(config.params("seed")))
    run_grid(grid, out, workers=1, progress=False, wall_time=False)
    score_run(out)
    return out


@pytest.fixture(scope="session")
def small_site(small_run: Path) -> Path:
    from pushbench.viewer import build_site

    site = small_run.parent / "site"
    build_site([small_run], site)
    return site
