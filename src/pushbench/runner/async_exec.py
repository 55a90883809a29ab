"""Episodes of API models as asyncio tasks, at most ``concurrency`` at once.

A model call waits on the network, not on the CPU, so one process runs many episodes: the native
loop awaits ``policy.aact`` (``AsyncOpenAI``); a backend without an async loop (``langgraph``) runs
in a thread with the sync client. The event loop lives in a background thread and hands each
finished episode's row to the runner, which appends it to ``episodes.jsonl`` exactly as it does for
worker processes (so resume and the final sort are unchanged).
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Iterator

from pushbench.policies import make_policy
from pushbench.registry import BACKENDS, CONTROLLERS, MEMORIES, Entry
from pushbench.runner.episode import backend_options, episode_row
from pushbench.runner.grid import EpisodeSpec
from pushbench.tasks import get_family
from pushbench.tasks.base import TaskSpec


async def arun_episode(spec: EpisodeSpec, task: TaskSpec, master_seed: int, trace_dir: Path | None,
                       policy_options: dict[str, Any], wall_time: bool = True,
                       env_options: dict[str, Any] | None = None) -> dict[str, Any]:
    started = time.perf_counter() if wall_time else None
    env = get_family(spec.family).environment(task, **(env_options or {}))
    policy = make_policy(spec.model, **policy_options)
    controller, memory = CONTROLLERS.make(spec.controller), MEMORIES.make(spec.memory)
    seed, async_loop = spec.policy_seed(master_seed), BACKENDS.entry(spec.backend).meta.get("async")
    try:
        if async_loop and hasattr(policy, "aact"):
            run = await Entry(async_loop).load()(env, policy, controller, memory, seed)
        else:
            run = await asyncio.to_thread(BACKENDS.load(spec.backend), env, policy, controller, memory, seed,
                                          **backend_options(spec, trace_dir))
    finally:
        if hasattr(policy, "aclose"):
            await policy.aclose()
    return episode_row(spec, task, env, run, policy, started, trace_dir)


async def run_jobs(jobs: list[tuple], concurrency: int, policy_options: dict[str, Any],
                   emit: Callable[[dict[str, Any]], None]) -> None:
    """Run every job; on the first failure cancel the rest (finished rows are already emitted)."""
    limit = max(1, int(concurrency))
    loop = asyncio.get_running_loop()
    executor = ThreadPoolExecutor(max_workers=limit, thread_name_prefix="episode")
    loop.set_default_executor(executor)
    gate = asyncio.Semaphore(limit)

    async def one(job: tuple) -> None:
        spec, task, master, trace_dir, wall_time = job
        async with gate:
            emit(await arun_episode(spec, task, master, Path(trace_dir) if trace_dir else None, policy_options,
                                    wall_time))

    tasks = [asyncio.create_task(one(job)) for job in jobs]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    finally:
        executor.shutdown(wait=False)


_DONE = object()


def iter_async_rows(jobs: list[tuple], concurrency: int, policy_options: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Rows in the order episodes finish; an episode's exception is re-raised here."""
    rows: queue.Queue[Any] = queue.Queue()

    def work() -> None:
        try:
            asyncio.run(run_jobs(jobs, concurrency, policy_options, rows.put))
        except BaseException as err:  # handed to the consuming thread
            rows.put(err)
        finally:
            rows.put(_DONE)

    thread = threading.Thread(target=work, name="pushbench-async-runner", daemon=True)
    thread.start()
    while (item := rows.get()) is not _DONE:
        if isinstance(item, BaseException):
            thread.join()
            raise item
        yield item
    thread.join()
