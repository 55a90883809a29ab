"""Collect every experiment's scored episodes into one table (``data/results/episodes.jsonl``)."""

from __future__ import annotations

import json
from pathlib import Path

from pushbench import config
from pushbench.log.names import EPISODES, SCORED
from pushbench.log.rows import read_episodes

BLACKBOX = "blackbox"  # the black-box agents' run folder (harness.pipeline)
TABLE = "episodes.jsonl"  # the results folder's one table: every run's scored rows


def aggregate(experiments: list[str], runs: Path | None = None, out: Path | None = None) -> Path:
    runs, out = runs or config.RUNS, out or config.RESULTS
    lines: list[str] = []
    for name in sorted(experiments):
        # experiments are scored from their traces (scored.jsonl); the black-box harness writes
        # scored rows itself (episodes.jsonl)
        path = runs / name / (EPISODES if name == BLACKBOX else SCORED)
        if not path.is_file():
            raise FileNotFoundError(f"run {name!r} has no scored episodes at {path}; run `dvc repro` first")
        if name == BLACKBOX:  # through the format check; the version is not a column of the table
            lines += [json.dumps({**row.facts(), "experiment": name}, sort_keys=True) for row in read_episodes(path)]
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                lines.append(json.dumps({**json.loads(line), "experiment": name}, sort_keys=True))
    out.mkdir(parents=True, exist_ok=True)
    target = out / TABLE
    target.write_text("".join(sorted(line + "\n" for line in lines)), encoding="utf-8")
    return target


def load_results(results: Path | str, experiment: str | None = None):
    """The aggregated episodes as a DataFrame, optionally one experiment's. ``results`` is the
    pipeline's results folder, or one run folder (``pushbench experiment NAME --model M --out DIR``),
    whose scored episodes count as the experiment it names (``experiment.json``; else the folder's name)."""
    import pandas as pd

    from pushbench.runner.experiment import recorded_experiment

    folder = Path(results)
    if (folder / SCORED).is_file():
        frame = pd.read_json(folder / SCORED, lines=True)
        frame["experiment"] = recorded_experiment(folder) or folder.name
    else:
        frame = pd.read_json(folder / TABLE, lines=True)
    return frame[frame.experiment == experiment].reset_index(drop=True) if experiment else frame


def configured_runs() -> list[str]:
    """Every run folder the pipeline makes: the experiments, and the black-box grid if configured."""
    names = sorted(config.params("experiments"))
    return names + ([BLACKBOX] if "blackbox" in config.params() else [])


if __name__ == "__main__":
    written = aggregate(configured_runs())
    print(f"aggregated -> {written.relative_to(config.ROOT)}")
