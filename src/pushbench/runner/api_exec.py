"""Episodes of API models in threads, at most ``concurrency`` at once.

A model call waits on the network, not on the CPU, so one process runs many episodes: each is the
same ``run_episode`` a worker process runs for SimLM (the one loop, with the sync HTTP client),
in a thread of its own. Rows go back to the runner as episodes finish, and the runner appends them
to ``episodes.jsonl`` exactly as for worker processes (so resume and the final sort are unchanged).

An episode that cannot finish because the run halted (a spend cap) or because its endpoint kept
failing after every retry comes back as ``Unfinished``: nothing of it is written, the other
episodes go on, and a rerun redoes it (the calls it paid for are answered by the response cache).
"""

from __future__ import annotations

from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any, Iterator

from pushbench.policies.spend import Meter, RunHalted
from pushbench.runner.episode import Unfinished, run_episode


def run_api_episode(job: tuple, policy_options: dict[str, Any], meter: Any,
                    env_options: dict[str, Any] | None = None) -> dict[str, Any] | Unfinished:
    """One job of the runner, ``(spec, task, master_seed, trace_dir, wall_time)``: its row, or
    ``Unfinished`` when the run halted or the model's endpoint failed past its retries."""
    from pushbench.policies.chat import ChatPolicyError

    spec, task, master, trace_dir, wall_time = job
    try:
        return run_episode(spec, task, master, Path(trace_dir) if trace_dir else None, policy_options, wall_time,
                           env_options, meter=meter)
    except RunHalted as halted:
        return Unfinished(spec.episode_id, halted.reason, halted.detail)
    except ChatPolicyError as err:
        return Unfinished(spec.episode_id, "api_error", str(err))


def iter_api_rows(jobs: list[tuple], concurrency: int, policy_options: dict[str, Any],
                  meter: Meter) -> Iterator[dict[str, Any] | Unfinished]:
    """Rows (or ``Unfinished``) in the order episodes finish. If the consumer stops early (an
    error, Ctrl-C), the meter is halted: running episodes stop at their next request, unwritten."""
    pool = ThreadPoolExecutor(max_workers=max(1, int(concurrency)), thread_name_prefix="episode")
    pending: set[Future] = {pool.submit(run_api_episode, job, policy_options, meter) for job in jobs}
    try:
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                yield future.result()
    finally:
        if pending:
            meter.halt("interrupted", "the run was stopped")
        pool.shutdown(wait=not pending, cancel_futures=True)
