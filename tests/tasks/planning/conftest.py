"""The planning family's tasks for its tests: the project's manifest, built here only if missing."""

from __future__ import annotations

from typing import Any

import pytest

from pushbench import config
from pushbench.tasks import load_tasks, manifest_path


@pytest.fixture(scope="module")
def tasks() -> list[Any]:
    if not manifest_path("planning").is_file() or not (config.HIDDEN / "planning").is_dir():
        from pushbench.tasks.manifests import build_family

        build_family("planning")
    return load_tasks("planning")
