"""The ``view`` command (``pushbench view RUN_DIR``): a static trajectory viewer of run folders."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer


def view(run_dirs: list[Path] = typer.Argument(..., help="One or more run folders (scored.jsonl or episodes.jsonl, traces/)."),
         out: Optional[Path] = typer.Option(None, "--out", help="Site folder (default: RUN_DIR/viewer for one run)."),
         workers: int = typer.Option(1, "--workers", min=1, help="Episode pages are written in this many processes.")) -> None:
    """Write a static trajectory viewer (open OUT/index.html in a browser; no server needed)."""
    from pushbench.viewer import ViewerError, build_site

    if out is None:
        if len(run_dirs) != 1:
            raise typer.BadParameter("--out is required with more than one run folder")
        out = run_dirs[0] / "viewer"
    try:
        stats = build_site(list(run_dirs), out, workers=workers)
    except ViewerError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(2) from None
    typer.echo(f"{stats.pages} episode pages ({stats.episodes} rows, {stats.missing_traces} without a trace) "
               f"-> {out / 'index.html'}")
    for note in sorted(stats.notes):
        typer.echo(f"note: {note} ({stats.without_views} episodes)")
