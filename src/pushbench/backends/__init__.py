"""Execution backends by name."""

from typing import Any

from pushbench.backends.native import EpisodeRun, arun_native, run_native


def run_langgraph(*args: Any, **kwargs: Any) -> EpisodeRun:
    """The LangGraph backend (imported on first use: langgraph is slow to import)."""
    from pushbench.backends.langgraph import run_langgraph as run

    return run(*args, **kwargs)


run_langgraph.resumable = True  # type: ignore[attr-defined]  # checkpoints under the run folder

BACKENDS = {"native": run_native, "langgraph": run_langgraph}
ASYNC_BACKENDS = {"native": arun_native}  # loops that await ``policy.aact`` (API models)

__all__ = ["ASYNC_BACKENDS", "BACKENDS", "run_langgraph", "run_native"]
