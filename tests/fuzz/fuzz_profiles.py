"""Fuzz profiles and the file digest of the confinement check.

``PUSHBENCH_FUZZ`` picks the profile: ``quick`` (the default, part of ``make test``: a few thousand
calls per family, well under a minute of CPU) or ``full`` (``make fuzz``: over 100,000 calls).
Both are deterministic: ``derandomize=True`` and no example database, so a run draws the same
calls on every machine.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from hypothesis import HealthCheck, Phase, settings

from fuzzkit import FULL

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


def digest_tree(root: Path, skip: tuple[str, ...] = ()) -> dict[str, str]:
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
