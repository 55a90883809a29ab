"""The fuzz tests' fixture (the confinement digest) and the per-family counts at the end of a run
(profiles: ``fuzz_profiles.py``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from pushbench import config  # noqa: E402

from fuzz_profiles import digest_tree, sklearn_data  # noqa: E402
from fuzzkit import PROFILE, TALLIES  # noqa: E402


@pytest.fixture
def tree_digest() -> Callable[[], dict[str, dict[str, str]]]:
    """Hashes of every file outside the episode workspaces the tools could touch: the snapshot
    trees, the project's ``data/`` (``data/tmp`` is the SWE bytecode and test-cache area, which
    test runs write by design) and the CSV files bundled with scikit-learn."""
    def digest() -> dict[str, dict[str, str]]:
        return {"snapshots": digest_tree(config.SNAPSHOT_SRC),
                "data": digest_tree(config.DATA, skip=("tmp",)),
                "sklearn": digest_tree(sklearn_data())}

    return digest


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not TALLIES:
        return
    terminalreporter.write_sep("-", f"fuzz counts (profile {PROFILE})")
    head = ("family", "episodes", "calls", "invalid", "accepted", "distinct_observations", "held_back")
    terminalreporter.write_line(" | ".join(head))
    totals = [0] * (len(head) - 1)
    for family in sorted(TALLIES):
        row = TALLIES[family].row()
        values = [row[h] for h in head[1:]]
        totals = [a + b for a, b in zip(totals, values)]
        terminalreporter.write_line(" | ".join([family, *map(str, values)]))
        tools = ", ".join(f"{t} {c}/{i}" for t, (c, i) in sorted(TALLIES[family].by_tool.items()))
        terminalreporter.write_line(f"    calls/invalid by tool: {tools}")
    terminalreporter.write_line(" | ".join(["total", *map(str, totals)]))
