"""Execute a notebook kept in jupytext percent form (``notebooks/NN-topic.py``) with papermill.

The executed copy has one parameters cell: papermill's injected cell takes the place of the
source's default ``parameters`` cell (which it tags ``injected-parameters`` in the staged copy,
papermill's own "replace this cell" mark) and holds every parameter, the source's defaults
overridden by the values passed. The executed copy is a pipeline output; volatile metadata
(papermill timings, kernel versions) is removed and split stream outputs are merged, so a rerun
writes the same bytes.
"""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path
from typing import Any

# jsonschema imports rfc3987_syntax, when installed, for its optional IRI format check, and that
# builds a Lark grammar at import: 1.2 s of every notebook stage. The notebook schema nbformat
# validates against has no IRI format, so the optional import is refused here.
sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]

import jupytext  # noqa: E402
import nbformat  # noqa: E402
import papermill  # noqa: E402

from pushbench import config

KERNEL = "python3"
# Two kernels started at once (make repro runs two stages side by side) can be given the same free
# ports: jupyter_client picks them before the kernel binds them, and the kernel that loses dies at
# start (papermill#511). Such a start is tried again; nothing of the notebook has run by then.
KERNEL_STARTS = 3
KERNEL_DIED = "Kernel died before replying to kernel_info"
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
    for cell in notebook.cells:
        tags = cell.metadata.get("tags", [])
        if "parameters" in tags:  # papermill replaces an `injected-parameters` cell instead of adding one
            cell.metadata["tags"] = [*tags, "injected-parameters"]
            break
    nbformat.write(notebook, staged)
    try:
        _papermill(staged, output, all_parameters(staged, parameters))
    finally:
        staged.unlink(missing_ok=True)
    scrub(output)
    return output


def _papermill(staged: Path, output: Path, parameters: dict[str, Any]) -> None:
    """Execute ``staged`` into ``output``, starting the kernel again if it dies at start."""
    for attempt in range(1, KERNEL_STARTS + 1):
        try:
            papermill.execute_notebook(str(staged), str(output), parameters=parameters, kernel_name=KERNEL,
                                       language="python", cwd=str(config.ROOT), progress_bar=False,
                                       log_output=False)
            return
        except RuntimeError as error:
            if KERNEL_DIED not in str(error) or attempt == KERNEL_STARTS:
                raise


def all_parameters(notebook: Path, passed: dict[str, Any]) -> dict[str, Any]:
    """The notebook's default parameters (literals, in their order) overridden by ``passed``."""
    defaults = {}
    for name, spec in papermill.inspect_notebook(str(notebook)).items():
        try:
            defaults[name] = ast.literal_eval(spec["default"])
        except (ValueError, SyntaxError) as error:
            raise ValueError(f"{notebook.name}: parameter {name} = {spec['default']} is not a literal") from error
    return {**defaults, **passed}


def scrub(path: Path) -> None:
    from nbconvert.preprocessors import CoalesceStreamsPreprocessor

    notebook = nbformat.read(path, as_version=4)
    # one print can reach the notebook as two stream outputs ("text", "\n") when the kernel flushes
    # between them, as it may on a busy machine: consecutive outputs of one stream are merged
    CoalesceStreamsPreprocessor().preprocess(notebook, {})
    notebook.metadata.pop("papermill", None)
    notebook.metadata.get("language_info", {}).pop("version", None)
    for i, cell in enumerate(notebook.cells):
        cell["id"] = f"cell-{i:02d}"  # jupytext and papermill draw random cell ids
        for key in VOLATILE_CELL_KEYS:
            cell.metadata.pop(key, None)
    nbformat.write(notebook, path)


def run_on(name: str, results: Path, out: Path) -> Path:
    """Execute NAME on another results folder or run folder (``aggregate.load_results``): the
    executed notebook into ``out``, its figures into ``out/figures/NAME``."""
    params = {"results": str(results), "figures": str(out / "figures" / name),
              "n_resamples": int(config.params("stats.n_resamples")), "seed": int(config.params("seed"))}
    return execute(name, params, out_dir=out)


def run_configured(name: str) -> Path:
    """The DVC stage: execute NAME with parameters from params.yaml (paths relative to the root)."""
    params = {"results": os.path.relpath(config.RESULTS, config.ROOT),
              "figures": os.path.relpath(config.FIGURES / name, config.ROOT),
              "n_resamples": int(config.params("stats.n_resamples")), "seed": int(config.params("seed"))}
    return execute(name, params)


if __name__ == "__main__":
    print(f"executed {sys.argv[1]} -> {os.path.relpath(run_configured(sys.argv[1]), config.ROOT)}")
