"""Fixtures of the SWE-lite tests over the toy snapshot (``swe_toy``): a snapshot root per module
(its bytecode warmed once) and the clamp environment with a test cache of its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from swe_toy import clamp_env, write_toy


@pytest.fixture(scope="module")
def snapshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_toy(tmp_path_factory.mktemp("snaps"))


@pytest.fixture
def env(snapshots: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PUSHBENCH_SWE_TEST_CACHE", str(tmp_path / "cache"))
    made = clamp_env(snapshots)
    yield made
    made.workspace.close()
