"""An executed notebook reads as analysis when rendered: figure inline, one parameters cell, tables
with 3 decimals and models weakest first. Executes ``06-blackbox`` (the smallest) with papermill
on a tiny synthetic results file and renders it with nbconvert's HTMLExporter."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import nbformat
import pytest
from nbconvert import HTMLExporter

from pushbench.analysis.notebooks import execute, scrub

ROOT = Path(__file__).resolve().parents[2]
AGENTS = {"standin-sim-base": "sim/base", "standin-sim-mini": "sim/mini"}  # alphabetical: base first
TASKS = 3


def episode(agent: str, target: int, task: int, prompt: str) -> dict:
    model = AGENTS[agent]
    valid = target - 2 + task * task + (model == "sim/base")  # sim/mini at N = 50: mean 49.667
    return {"experiment": "blackbox", "family": "reposcan", "backend": "blackbox", "memory": "agent",
            "agent": agent, "model": model, "controller": prompt, "target": target, "seed": 0,
            "task_id": f"reposcan-fixt-t{task}-n{target:03d}", "success": valid >= target,
            "valid_count": valid, "duplicate_submit_rate": 0.1 * task / 3, "steps": 20 + task}


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> tuple[nbformat.NotebookNode, Path, Path]:
    tmp = tmp_path_factory.mktemp("notebook")
    results, figures = tmp / "results", tmp / "figures"
    results.mkdir()
    lines = [json.dumps(episode(agent, target, task, prompt), sort_keys=True) for agent in AGENTS
             for target in (50, 100) for task in range(TASKS) for prompt in ("default", "checklist")]
    (results / "episodes.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    # seed is not passed: the single parameters cell must still hold it, from the source's defaults
    path = execute("06-blackbox", {"results": str(results), "figures": str(figures), "n_resamples": 50},
                   out_dir=tmp / "notebooks", source_dir=ROOT / "notebooks")
    return nbformat.read(path, as_version=4), results, figures


@pytest.fixture(scope="module")
def html(executed: tuple[nbformat.NotebookNode, Path, Path]) -> str:
    body, _ = HTMLExporter().from_notebook_node(executed[0])
    return body


def displayed_tables(notebook: nbformat.NotebookNode) -> list[str]:
    return [output.data["text/html"] for cell in notebook.cells if cell.cell_type == "code"
            for output in cell.outputs if "text/html" in output.get("data", {})]


def test_the_figure_is_embedded_and_is_the_saved_png(executed, html: str) -> None:
    notebook, _, figures = executed
    assert re.search(r'<img [^>]*src="data:image/png;base64,', html)
    shown = [base64.b64decode(output.data["image/png"]) for cell in notebook.cells if cell.cell_type == "code"
             for output in cell.outputs if "image/png" in output.get("data", {})]
    assert shown == [(figures / "fig5_blackbox.png").read_bytes()]
    assert (figures / "fig5_blackbox.pdf").is_file()


def test_the_parameters_cell_appears_once_with_every_parameter(executed, html: str) -> None:
    notebook, results, _ = executed
    assigning = [cell for cell in notebook.cells if cell.cell_type == "code"
                 and re.search(r"^n_resamples = ", cell.source, re.M)]
    assert len(assigning) == 1
    assert assigning[0].metadata.tags == ["injected-parameters"]
    assert re.search(r"^seed = 0$", assigning[0].source, re.M)
    assert html.count(str(results)) == 1  # the value passed, shown once
    assert "data/results" not in html  # the source's default cell is gone


def test_displayed_tables_have_three_decimals_and_go_weakest_model_first(executed, html: str) -> None:
    tables = displayed_tables(executed[0])
    assert len(tables) == 2
    rendered = re.findall(r"<table[^>]*>.*?</table>", html, re.S)
    assert len(rendered) == 2
    for table in tables + rendered:
        cells = [c.strip() for c in re.findall(r"<td>([^<]*)</td>", table)]
        floats = [c for c in cells if re.fullmatch(r"-?[\d,]+\.\d+", c)]
        assert floats and all(re.fullmatch(r"-?\d+\.\d{3}", c) for c in floats), floats
        models = [c for c in cells if c.startswith("sim/")]
        assert models.index("sim/mini") < models.index("sim/base") and models[-1] == "sim/base"
    assert "<td>49.667</td>" in tables[0]  # valid_count, not 49.666667


def test_a_notebook_runs_on_the_run_folder_of_an_experiment_on_another_model(tmp_path: Path) -> None:
    """`pushbench experiment NAME --model M --out DIR` makes a run folder; `notebook --results DIR`
    reads its scored episodes as experiment NAME (its experiment.json). A grid of the RepoScan
    main table on two tasks stands in for the real model's run."""
    from agentkit import data_missing
    from typer.testing import CliRunner

    from pushbench import config
    from pushbench.cli import app
    from pushbench.runner import Grid, run_grid
    from pushbench.runner.experiment import write_experiment_record
    from pushbench.scoring import score_run

    if (reason := data_missing()) is not None:
        pytest.skip(reason)
    grid = Grid("reposcan", ["standard", "gated", "stateqgp"], ["sim/base"], ["full"], ["native"], 1,
                limit=2, master_seed=int(config.params("seed")))
    run = tmp_path / "real-model-run"
    write_experiment_record(run, "reposcan-main", grid)
    score_run(run_grid(grid, run, progress=False, wall_time=False).parent)
    result = CliRunner().invoke(app, ["notebook", "01-reposcan-main", "--results", str(run),
                                      "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    table = (tmp_path / "out" / "figures" / "01-reposcan-main" / "reposcan_main_table.csv").read_text()
    assert "sim/base" in table and "stateqgp" in table


def test_a_print_split_by_a_kernel_flush_is_saved_as_one_output(tmp_path: Path) -> None:
    out = nbformat.v4.new_output
    cell = nbformat.v4.new_code_cell("print(x)", outputs=[
        out("stream", name="stdout", text="a line"), out("stream", name="stdout", text="\n"),
        out("stream", name="stderr", text="a warning\n")])
    split, whole = tmp_path / "split.ipynb", tmp_path / "whole.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), split)
    cell.outputs = [out("stream", name="stdout", text="a line\n"), cell.outputs[2]]
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), whole)
    scrub(split)
    scrub(whole)
    assert split.read_bytes() == whole.read_bytes()
    assert [o["text"] for o in nbformat.read(split, as_version=4).cells[0].outputs] == ["a line\n", "a warning\n"]


def test_a_kernel_that_dies_at_start_is_started_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import papermill

    from pushbench.analysis import notebooks

    (tmp_path / "nb.py").write_text("# %% tags=[\"parameters\"]\nx = 1\n", encoding="utf-8")
    starts: list[str] = []

    def execute_notebook(source: str, output: str, **_: object) -> None:
        starts.append(output)
        if len(starts) == 1:
            raise RuntimeError(notebooks.KERNEL_DIED)  # as jupyter_client says it
        nbformat.write(nbformat.read(source, as_version=4), output)

    monkeypatch.setattr(papermill, "execute_notebook", execute_notebook)
    assert execute("nb", {}, out_dir=tmp_path / "out", source_dir=tmp_path).is_file() and len(starts) == 2

    def other_failure(source: str, output: str, **_: object) -> None:
        starts.append(output)
        raise RuntimeError("a cell raised")

    starts.clear()
    monkeypatch.setattr(papermill, "execute_notebook", other_failure)  # not a kernel start: no second try
    with pytest.raises(RuntimeError, match="a cell raised"):
        execute("nb", {}, out_dir=tmp_path / "out", source_dir=tmp_path)
    assert len(starts) == 1
