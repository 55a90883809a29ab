"""The DVC stage ``runs@NAME``: the grid of ``experiments.NAME`` in params.yaml, into data/runs/NAME/."""

from __future__ import annotations

from pathlib import Path

from pushbench import config
from pushbench.runner.grid import Grid
from pushbench.runner.local import run_grid
from pushbench.runner.ray_exec import default_executor


def experiment_grid(name: str) -> Grid:
    spec = config.params(f"experiments.{name}")
    return Grid(spec["family"], spec["controllers"], spec["models"], spec["memories"], spec["backends"],
                int(spec["seeds"]), spec.get("targets"), spec.get("limit"), int(config.params("seed")),
                spec.get("split", "short"))


def run_experiment(name: str, workers: int | None = None, progress: bool = True,
                   executor: str | None = None) -> Path:
    """Episodes (raw facts) and traces; ``pushbench.scoring`` scores them in the next stage."""
    chat = dict(config.params(f"experiments.{name}").get("chat") or {})  # API models: ChatOptions + concurrency
    concurrency = int(chat.pop("concurrency", 8))
    return run_grid(experiment_grid(name), config.RUNS / name, workers or int(config.params("run.workers")),
                    progress, policy_options=chat, concurrency=concurrency, wall_time=False,
                    executor=executor or default_executor())


def experiment_names() -> list[str]:
    return sorted(config.params("experiments"))
