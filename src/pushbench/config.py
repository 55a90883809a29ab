"""Every path the project uses, and params.yaml read by key.

Paths are relative to the project root (the nearest folder from the cwd upward holding
``params.yaml`` and ``dvc.yaml``), so pipeline outputs never contain absolute paths and commands
work from any folder inside the checkout. Set ``PUSHBENCH_ROOT`` to point the library at another
checkout (a folder holding ``params.yaml``).
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml


MARKERS = ("params.yaml", "dvc.yaml")  # a folder holding both is the project root


class ProjectRootError(RuntimeError):
    """The command runs outside a PushBench checkout (and PUSHBENCH_ROOT names none)."""


def find_root(start: Path | None = None) -> Path | None:
    """$PUSHBENCH_ROOT if it holds params.yaml, else the nearest folder from ``start`` (the cwd)
    upward holding params.yaml and dvc.yaml; None when there is none."""
    env = os.environ.get("PUSHBENCH_ROOT")
    if env:
        root = Path(env).resolve()
        return root if (root / "params.yaml").is_file() else None
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if all((folder / marker).is_file() for marker in MARKERS):
            return folder
    return None


def project_root() -> Path:
    """The project root, or the cwd outside one (so importing never fails; see ``require_root``)."""
    return find_root() or Path.cwd().resolve()


def require_root() -> Path:
    """The project root, or ``ProjectRootError`` saying how to get one (the CLI's check)."""
    if FOUND is not None:
        return FOUND
    env = os.environ.get("PUSHBENCH_ROOT")
    if env:
        raise ProjectRootError(f"PUSHBENCH_ROOT={env} holds no params.yaml; point it at a PushBench checkout "
                               "or unset it")
    raise ProjectRootError(f"not inside a PushBench checkout: no folder from {Path.cwd()} upward holds "
                           f"{' and '.join(MARKERS)}; run from the checkout (or any folder in it) "
                           "or set PUSHBENCH_ROOT")


FOUND = find_root()
ROOT = FOUND or Path.cwd().resolve()
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
