"""Every path the project uses, and params.yaml read by key.

Paths are relative to the project root (the folder holding ``params.yaml``), so pipeline outputs
never contain absolute paths. Set ``PUSHBENCH_ROOT`` to point the library at another checkout.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml


def project_root() -> Path:
    """The folder holding params.yaml: $PUSHBENCH_ROOT, else the nearest ancestor of the cwd."""
    env = os.environ.get("PUSHBENCH_ROOT")
    if env:
        return Path(env).resolve()
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / "params.yaml").is_file():
            return folder
    return here


ROOT = project_root()
PARAMS_FILE = ROOT / "params.yaml"
SNAPSHOT_LOCK = ROOT / "snapshots" / "lock.yaml"
SNAPSHOT_SRC = ROOT / "snapshots" / "src"  # extracted trees (DVC output, git-ignored)
DATA = ROOT / "data"
MANIFESTS = DATA / "manifests"  # agent-visible task specs
HIDDEN = DATA / "hidden"  # verifier-only answers: nothing but the verifier opens this
RUNS = DATA / "runs"
RESULTS = DATA / "results"
FIGURES = ROOT / "paper_figures"


@lru_cache(maxsize=4)
def _load_params(path: str) -> dict[str, Any]:
    with open(path, encoding="utf-8") as handle:
        return yaml.safe_load(handle) or {}


def params(key: str | None = None, path: Path | None = None) -> Any:
    """params.yaml, or one dotted key of it (``params("reposcan.page_size")``)."""
    data = _load_params(str(path or PARAMS_FILE))
    if key is None:
        return data
    node: Any = data
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            raise KeyError(f"params.yaml has no key {key!r} (missing {part!r})")
        node = node[part]
    return node
