"""One loop for every policy: ``openai/sim-base`` through serve-sim over HTTP, under the runner's
API executor (threads) on the native and the LangGraph backend, gives every memory on every
family exactly the episodes of in-process SimLM at the same seed: actions, verdicts, memory
calls, summaries and views (``tests/helpers/parity.py``; the Ray executor's case is in
test_ray.py, which owns the module's Ray instance)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

import parity
from agentkit import data_missing
from pushbench.runner import run_grid
from serving import ServeSim, serve_sim

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeSim]:
    if (reason := data_missing()) is not None:
        pytest.skip(reason)
    sim = serve_sim(tmp_path_factory.mktemp("serve-sim") / "log")
    try:
        yield sim
    finally:
        sim.stop()


@pytest.mark.parametrize("backend", ["native", "langgraph"])
def test_api_model_episodes_equal_in_process_simlm(server: ServeSim, tmp_path: Path, backend: str) -> None:
    grids = parity.grids(backend)
    for grid in grids:
        run_grid(grid, tmp_path / "http", progress=False, wall_time=False, concurrency=4,
                 policy_options=parity.http_options(server.url))
    parity.reference(grids, tmp_path / "local")
    http, local = parity.contents(tmp_path / "http"), parity.contents(tmp_path / "local")
    assert sorted(http) == sorted(local) and len(http) == 1 + len(parity.TASKS) * len(parity.MEMORY_NAMES)
    for name in local:
        assert http[name] == local[name], name
    used = parity.exercised(tmp_path / "http")
    assert used["summaries"] > 0 and used["memory_calls"] > 0 and used["views"] > 0, used
