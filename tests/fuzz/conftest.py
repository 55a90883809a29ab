"""Fuzz profiles, the confinement check and the per-family counts.

``PUSHBENCH_FUZZ`` picks the profile: ``quick`` (the default, part of ``make test``: a few thousand
calls per family, well under a minute) or ``full`` (``make fuzz``: over 100,000 calls, with the
counts printed at the end). Both are deterministic: ``derandomize=True`` and no example database,
so a run draws the same calls on every machine.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path
from typing import Callable

import pytest
from hypothesis import HealthCheck, Phase, settings

sys.path.insert(0, str(Path(__file__).parent))

from pushbench import config  # noqa: E402

from fuzzkit import FULL, PROFILE, TALLIES  # noqa: E402

COMMON = dict(derandomize=True, database=None, deadline=None, print_blob=False,
              suppress_health_check=list(HealthCheck))
settings.register_profile("pushbench-quick", **COMMON)
settings.register_profile("pushbench-full", **COMMON)

# (examples, most calls per example) per family and profile; an episode draws 1..most calls.
SIZES = {
    "quick": {"reposcan": (40, 90), "rows": (40, 90), "dataops": (40, 90), "swe": (20, 60)},
    "full": {"reposcan": (600, 110), "rows": (600, 110), "dataops": (700, 110), "swe": (120, 90)},
}


def fuzz_settings(family: str) -> settings:
    examples, _ = SIZES["full" if FULL else "quick"][family]
    extra = {"phases": [Phase.explicit, Phase.generate]} if family == "swe" else {}  # shrinking test runs takes minutes
    return settings(settings.get_profile("pushbench-full" if FULL else "pushbench-quick"), max_examples=examples,
                    **extra)


def max_calls(family: str) -> int:
    return SIZES["full" if FULL else "quick"][family][1]


def _digest(root: Path, skip: tuple[str, ...] = ()) -> dict[str, str]:
    out = {}
    if not root.exists():
        return out
    for folder, dirs, files in os.walk(root, followlinks=True):
        rel_dir = os.path.relpath(folder, root)
        dirs[:] = sorted(d for d in dirs if os.path.normpath(os.path.join(rel_dir, d)) not in skip)
        for name in files:
            path = Path(folder) / name
            try:
                out[os.path.join(rel_dir, name)] = hashlib.sha256(path.read_bytes()).hexdigest()
            except OSError as err:
                out[os.path.join(rel_dir, name)] = f"unreadable: {err.strerror}"
    return out


def sklearn_data() -> Path:
    from pushbench.tasks.rows.data import data_file

    return data_file("iris").parent


@pytest.fixture
def tree_digest() -> Callable[[], dict[str, dict[str, str]]]:
    """Hashes of every file outside the episode workspaces the tools could touch: the snapshot
    trees, the project's ``data/`` (``data/tmp`` is the SWE bytecode and test-cache area, which
    test runs write by design) and the CSV files bundled with scikit-learn."""
    def digest() -> dict[str, dict[str, str]]:
        return {"snapshots": _digest(config.SNAPSHOT_SRC), "data": _digest(config.DATA, skip=("tmp",)),
                "sklearn": _digest(sklearn_data())}

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
