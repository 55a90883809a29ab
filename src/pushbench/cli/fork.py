"""The ``fork`` command (``pushbench fork --run RUN --at STEPS --controller C --out OUT``)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer


def fork(run: Path = typer.Option(..., "--run", help="The recorded run folder."),
         at: str = typer.Option(..., "--at", help="Steps to fork at: numbers or percentages of each episode's steps (25%,50%,75%)."),
         controller: str = typer.Option(..., "--controller", help="The controller from the fork step on."),
         out: Path = typer.Option(..., "--out", help="Run folder for the forks (episodes.jsonl, traces/, scored.jsonl)."),
         episode: Optional[str] = typer.Option(None, "--episode", help="One episode id (default: every failed episode of the run)."),
         memory: Optional[str] = typer.Option(None, "--memory", help="The fork's memory (default: the episode's)."),
         model: Optional[str] = typer.Option(None, "--model", help="The fork's model (default: the episode's)."),
         backend: Optional[str] = typer.Option(None, "--backend", help="native or langgraph (from a replayed checkpoint history; default: the episode's)."),
         from_controller: Optional[str] = typer.Option(None, "--from-controller", help="Grid form: only failed episodes of this controller."),
         workers: int = typer.Option(1, "--workers", min=1, help="Forks run in this many processes.")) -> None:
    """Replay recorded episodes up to a step without calling the model, then continue under another condition."""
    from pushbench import config
    from pushbench.log.names import EPISODES, SCORED
    from pushbench.replay.fork import ForkError, Selection, run_forks
    from pushbench.scoring import ScoringError, load_episodes, score_run, summarize

    try:
        written = run_forks(run, out, at, controller, memory, model, episode, int(config.params("seed")),
                            backend=backend, selection=Selection(controller=from_controller), workers=workers)
        if (out / EPISODES).is_file():
            score_run(out)
    except (ForkError, ScoringError) as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(2) from None
    typer.echo(f"{len(written)} forks written to {out}")
    if (out / SCORED).is_file():
        typer.echo(summarize(load_episodes(out)).to_string(index=False))
