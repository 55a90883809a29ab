"""The runner: grids of episodes, run locally (worker processes, or threads for API models),
append-only and resumable. Names load on first use (``from pushbench.runner import run_grid``).

- ``grid``: ``EpisodeSpec`` and ``Grid``;  ``episode``: one episode's raw facts and trace;
- ``local``: ``run_grid``;  ``api_exec``: API-model episodes in threads;
- ``experiment``: the ``runs@NAME`` DVC stage (the run folder's files: ``pushbench.log``);
- ``checks``: a grid checked before anything is written;  ``lock``: one run per folder.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {"EpisodeSpec": "grid", "Grid": "grid", "run_episode": "episode", "episode_row": "episode",
          "backend_options": "episode", "run_grid": "local", "trace_name": "log.names", "write_trace": "log.traces",
          "read_done": "log.rows", "sort_jsonl": "log.rows", "run_experiment": "experiment",
          "run_lock": "lock", "RunLocked": "lock", "check_grid": "checks", "GridError": "checks",
          "RunIncomplete": "local", "Unfinished": "episode"}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'pushbench.runner' has no attribute {name!r}")
    where = _WHERE[name]  # a runner module, or one of the run-folder format's (``pushbench.log``)
    module = f"pushbench.{where}" if where.startswith("log.") else f"pushbench.runner.{where}"
    return getattr(importlib.import_module(module), name)


__all__ = sorted(_WHERE)
