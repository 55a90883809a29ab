"""Execute a notebook kept in jupytext percent form (``notebooks/NN-topic.py``) with papermill.

The executed copy is a pipeline output; volatile metadata (papermill timings, kernel versions) is
removed so a rerun writes the same bytes.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import jupytext
import nbformat
import papermill

from pushbench import config

KERNEL = "python3"
VOLATILE_CELL_KEYS = ("execution", "papermill")


def execute(name: str, parameters: dict[str, Any], out_dir: Path | None = None,
            source_dir: Path | None = None) -> Path:
    source = (source_dir or config.ROOT / "notebooks") / f"{name}.py"
    if not source.is_file():
        raise FileNotFoundError(f"no notebook source at {source}")
    out_dir = out_dir or config.DATA / "notebooks"
    out_dir.mkdir(parents=True, exist_ok=True)
    staged = out_dir / f".{name}.input.ipynb"
    output = out_dir / f"{name}.ipynb"
    notebook = jupytext.read(source)
    notebook.metadata["kernelspec"] = {"name": KERNEL, "display_name": "Python 3", "language": "python"}
    notebook.metadata["language_info"] = {"name": "python"}
    nbformat.write(notebook, staged)
    try:
        papermill.execute_notebook(str(staged), str(output), parameters=parameters, kernel_name=KERNEL,
                                   language="python", cwd=str(config.ROOT), progress_bar=False,
                                   log_output=False)
    finally:
        staged.unlink(missing_ok=True)
    scrub(output)
    return output


def scrub(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    notebook.metadata.pop("papermill", None)
    notebook.metadata.get("language_info", {}).pop("version", None)
    for i, cell in enumerate(notebook.cells):
        cell["id"] = f"cell-{i:02d}"  # jupytext and papermill draw random cell ids
        for key in VOLATILE_CELL_KEYS:
            cell.metadata.pop(key, None)
    nbformat.write(notebook, path)


def run_configured(name: str) -> Path:
    """The DVC stage: execute NAME with parameters from params.yaml (paths relative to the root)."""
    params = {"results": os.path.relpath(config.RESULTS, config.ROOT),
              "figures": os.path.relpath(config.FIGURES / name, config.ROOT),
              "n_resamples": int(config.params("stats.n_resamples")), "seed": int(config.params("seed"))}
    return execute(name, params)


if __name__ == "__main__":
    print(f"executed {sys.argv[1]} -> {os.path.relpath(run_configured(sys.argv[1]), config.ROOT)}")
