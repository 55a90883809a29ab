"""The DVC stage ``runs@NAME``: the grid of ``experiments.NAME`` in params.yaml, into data/runs/NAME/."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pushbench import config
from pushbench.runner.grid import Grid
from pushbench.runner.local import run_grid
from pushbench.runner.ray_exec import default_executor


def experiment_grid(name: str, models: list[str] | None = None) -> Grid:
    """The experiment's grid; ``models`` in place of its own (a real model on the same grid)."""
    spec = config.params(f"experiments.{name}")
    return Grid(spec["family"], spec["controllers"], models or spec["models"], spec["memories"], spec["backends"],
                int(spec["seeds"]), spec.get("targets"), spec.get("limit"), int(config.params("seed")),
                spec.get("split", "short"), tuple(spec["tasks"]) if spec.get("tasks") else None)


def experiment_chat(name: str) -> tuple[dict[str, Any], int]:
    """The experiment's ``chat:`` options (``ChatOptions``) and its API concurrency (default 8)."""
    chat = dict(config.params(f"experiments.{name}").get("chat") or {})
    return chat, int(chat.pop("concurrency", 8))


def run_experiment(name: str, workers: int | None = None, progress: bool = True,
                   executor: str | None = None) -> Path:
    """Episodes (raw facts) and traces; ``pushbench.scoring`` scores them in the next stage."""
    chat, concurrency = experiment_chat(name)
    return run_grid(experiment_grid(name), config.RUNS / name, workers or int(config.params("run.workers")),
                    progress, policy_options=chat, concurrency=concurrency, wall_time=False,
                    executor=executor or default_executor())


RECORD = "experiment.json"  # in a folder of `pushbench experiment NAME --out DIR`: which grid it holds


def write_experiment_record(folder: Path, name: str, grid: Grid) -> None:
    """Name the experiment a folder holds (the notebooks label its rows with it)."""
    folder.mkdir(parents=True, exist_ok=True)
    data = {"experiment": name, "family": grid.family, "models": list(grid.models)}
    (folder / RECORD).write_text(json.dumps(data, sort_keys=True, indent=1) + "\n", encoding="utf-8")


def recorded_experiment(folder: Path) -> str | None:
    try:
        return str(json.loads((Path(folder) / RECORD).read_text(encoding="utf-8"))["experiment"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def experiment_names() -> list[str]:
    return sorted(config.params("experiments"))
