"""The Ray executor: a grid's episodes as Ray tasks, on the cluster named by ``$RAY_ADDRESS`` or on
a local Ray instance started for the run and stopped after it.

Workers share no filesystem with the driver. Each episode gets its episode spec, its task spec and
the verifier's answers for its task (one object-store entry per task) as task arguments, runs in a
node-local scratch folder and returns its row and its gzip trace bytes; the driver alone writes the
run folder, through the loop of ``local.run_grid`` (append + fsync per row, final sort), so resume
and the bytes are those of the local executor. The pinned snapshot trees are files on disk: every
node needs them under its own project root (``pushbench snapshots fetch``); a node without them
fails the run with one clear error instead of recording failed episodes.

Faults: a worker that dies mid-episode makes Ray rerun the episode (``MAX_RETRIES``); the driver
had written nothing for it, so no row is lost or doubled. An exception inside an episode becomes a
row with zero LLM calls whose trace holds the events logged so far, no end event (scored
``termination: error``) and the traceback; the other episodes go on. API models run in
``workers`` threaded actors, each with at most ``concurrency`` episodes in flight, through the same
``run_episode`` as everywhere else; they charge one meter actor, so the run's spend caps hold across
the cluster, and an episode the run halted comes back ``Unfinished`` (nothing written).
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import signal
import socket
import tempfile
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable, Iterator

from pushbench import config
from pushbench.policies import is_api_model
from pushbench.runner.episode import VERIFIED, run_episode
from pushbench.log.models import Trace
from pushbench.log.names import TRACES, trace_name, trace_stem
from pushbench.log.traces import write_trace
from pushbench.runner.grid import EpisodeSpec
from pushbench.tasks import get_family
from pushbench.tasks.base import TaskSpec

EXECUTORS = ("local", "ray")
MAX_RETRIES = 3  # reruns of an episode whose worker process died
KILL_HOOK = "PUSHBENCH_RAY_KILL_DIR"  # tests: a file named after an episode's trace kills its worker once


class RayExecutorError(RuntimeError):
    """The run cannot go on (a node lacks the snapshots, an episode's worker died too often)."""


class NodeSetupError(RuntimeError):
    """Raised in a worker whose node lacks files every episode needs."""


def check_executor(name: str) -> str:
    if name not in EXECUTORS:
        raise ValueError(f"unknown executor {name!r}; choose one of {', '.join(EXECUTORS)}")
    return name


def default_executor() -> str:
    """``run.executor`` in params.yaml (``local`` when absent)."""
    return check_executor(str((config.params("run") or {}).get("executor", "local")))


# --------------------------------------------------------------------------- the driver


@contextmanager
def ray_session(num_cpus: int) -> Iterator[Any]:
    """Ray, connected: the running instance, else ``$RAY_ADDRESS``, else a local one for this run."""
    try:
        import ray
    except ImportError as err:
        raise RayExecutorError("the ray executor needs the `ray` package (pinned in requirements.lock)") from err
    if ray.is_initialized():
        yield ray
        return
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    address = os.environ.get("RAY_ADDRESS")
    if address:
        ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
    else:
        _start_local(ray, max(1, num_cpus))
    try:
        yield ray
    finally:
        ray.shutdown()


def _start_local(ray: Any, num_cpus: int, attempts: int = 3) -> None:
    """A local instance. On a busy machine the raylet can give up on its agent processes (a fixed
    15 s wait for their ports while they import); a second try finds the imports in the page cache."""
    for attempt in range(1, attempts + 1):
        try:
            ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False,
                     logging_level=logging.WARNING)
            return
        except Exception as err:  # Ray raises a bare Exception when its node does not come up
            ray.shutdown()
            if attempt == attempts or "timed out during startup" not in str(err):
                raise RayExecutorError(f"the local Ray instance did not start: {err}") from None


def iter_ray_rows(jobs: list[tuple], workers: int, concurrency: int, policy_options: dict[str, Any],
                  meter: Any = None) -> Iterator[Any]:
    """Rows (or ``Unfinished``) in the order episodes finish; each row's trace is in the run folder
    before it is yielded. ``jobs`` are the local runner's ``(spec, task, master_seed, trace_dir,
    wall_time)`` tuples; ``meter`` is the run's spend meter (API models)."""
    if not jobs:
        return
    with ray_session(workers) as ray:
        submit, actors = _submitter(ray, jobs, workers, concurrency, policy_options, meter)
        window = 2 * max(1, int(ray.cluster_resources().get("CPU", 1))) + max(1, concurrency) * len(actors)
        queue = list(reversed(jobs))
        pending: dict[Any, Any] = {}  # Ray object ref -> its job
        try:
            while queue or pending:
                while queue and len(pending) < window:
                    job = queue.pop()
                    pending[submit(job)] = job
                [ref], _ = ray.wait(list(pending), num_returns=1)
                job = pending.pop(ref)
                row, trace = _result(ray, ref, job[0])
                if trace is not None:
                    _write_bytes(Path(job[3]) / trace_name(row["episode_id"]), trace)
                yield row
                if actors and meter is not None and meter.halted is not None:  # the driver halted the run
                    actors[-1].halt.remote(meter.halted.reason, meter.halted.detail)
        finally:
            if actors:
                if queue or pending:  # stopped early: running API episodes stop at their next request
                    ray.get(actors[-1].halt.remote("interrupted", "the run was stopped"))
                sync_meter(ray, actors[-1], meter)
            for actor in actors:  # on a cluster that outlives this run too
                ray.kill(actor)


def _submitter(ray: Any, jobs: list[tuple], workers: int, concurrency: int, policy_options: dict[str, Any],
               meter: Any) -> tuple[Callable[[tuple], Any], list[Any]]:
    """A function submitting one job (a task for SimLM, a method call of a threaded actor for API
    models), and the actors (the API workers, then the meter actor they charge)."""
    hidden = {key: ray.put(_hidden_bytes(*key)) for key in {(j[1].family, j[1].task_id) for j in jobs}}
    pinned = _pinned_snapshots()
    task = ray.remote(_episode_task).options(num_cpus=1, max_retries=MAX_RETRIES, retry_exceptions=False)
    actors: list[Any] = []
    if any(is_api_model(j[0].model) for j in jobs):
        caps = (meter.max_cost, meter.max_total_tokens, meter.prices) if meter is not None else (None, None, None)
        shared = ray.remote(MeterActor).options(max_concurrency=4 * max(1, concurrency)).remote(*caps)
        actor = ray.remote(ApiWorker).options(max_concurrency=max(1, concurrency), max_restarts=MAX_RETRIES,
                                              max_task_retries=MAX_RETRIES)
        actors = [actor.remote(policy_options, shared) for _ in range(max(1, workers))] + [shared]
    turn = iter(range(len(jobs)))

    def submit(job: tuple) -> Any:
        spec, spec_task, master, trace_dir, wall_time = job
        args = (spec, spec_task, master, wall_time, hidden[(spec_task.family, spec_task.task_id)],
                _run_key(trace_dir), pinned)
        if is_api_model(spec.model):
            return actors[next(turn) % (len(actors) - 1)].episode.remote(*args)
        return task.remote(*args)

    return submit, actors


def _result(ray: Any, ref: Any, spec: EpisodeSpec) -> tuple[dict[str, Any], bytes]:
    try:
        return ray.get(ref)
    except NodeSetupError as err:  # Ray's task error is also an instance of the cause's class
        raise RayExecutorError(str(err).strip().splitlines()[-1]) from None
    except (ray.exceptions.WorkerCrashedError, ray.exceptions.ActorDiedError,
            ray.exceptions.NodeDiedError) as err:
        raise RayExecutorError(f"episode {spec.episode_id}: its Ray worker died {MAX_RETRIES + 1} times "
                               f"({type(err).__name__}); rerun to finish the missing episodes") from None


def _hidden_bytes(family: str, task_id: str) -> bytes | None:
    """The verifier's answer file for one task, as bytes for the object store (None: the family has none)."""
    from pushbench.verifier import hidden_path

    path = hidden_path(family, task_id)
    return path.read_bytes() if path.is_file() else None


def _pinned_snapshots() -> list[str]:
    from pushbench.snapshots import read_lock

    return sorted(read_lock()) if config.SNAPSHOT_LOCK.is_file() else []


def _run_key(trace_dir: str) -> str:
    """Names the run's scratch folder on every node (a retried langgraph episode finds its checkpoint)."""
    return hashlib.sha256(str(Path(trace_dir).resolve()).encode()).hexdigest()[:16]


def _write_bytes(final: Path, data: bytes) -> None:
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.with_suffix(".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, final)


# --------------------------------------------------------------------------- the workers


class Scratch:
    """A node-local folder for one episode: its trace, its task's answers, a langgraph checkpoint."""

    def __init__(self, run_key: str, spec: EpisodeSpec, task: TaskSpec, hidden: bytes | None):
        top = Path(tempfile.gettempdir()) / f"pushbench-ray-{os.getuid()}"
        top.mkdir(mode=0o700, exist_ok=True)  # the answers pass through here: private to this user
        base = top / run_key
        self.traces = base / TRACES
        self.traces.mkdir(parents=True, exist_ok=True)
        self.name = trace_name(spec.episode_id)
        self.answers = base / "hidden" / trace_stem(spec.episode_id)
        self.options: dict[str, Any] = {}
        if hidden is not None:
            _write_bytes(self.answers / task.family / f"{task.task_id}.json", hidden)
            self.options["hidden_root"] = self.answers

    def take_trace(self) -> bytes:
        path = self.traces / self.name
        data = path.read_bytes()
        path.unlink()
        return data

    def close(self) -> None:
        shutil.rmtree(self.answers, ignore_errors=True)


def _episode_task(spec: EpisodeSpec, task: TaskSpec, master: int, wall_time: bool, hidden: bytes | None,
                  run_key: str, pinned: list[str]) -> tuple[dict[str, Any], bytes]:
    scratch = Scratch(run_key, spec, task, hidden)
    events: list[dict[str, Any]] = []
    try:
        try:
            row = run_episode(spec, task, master, scratch.traces, wall_time=wall_time,
                              env_options={**scratch.options, "sink": events.append})
        except Exception as err:
            row = _error_episode(spec, task, scratch, events, err, pinned)
        return _finish(spec, row, scratch)
    finally:
        scratch.close()
        _release_idle(spec.family)


def _release_idle(family: str) -> None:
    """A family's per-process leftovers (idle SWE workspaces): a Ray worker may be killed, not ended."""
    release = getattr(get_family(family), "release_idle", None)
    if release is not None:
        release()


class ApiWorker:
    """One Ray actor running API-model episodes in its threads (Ray caps those in flight at the
    actor's ``max_concurrency``), each through ``run_api_episode`` as the local executor runs it."""

    def __init__(self, policy_options: dict[str, Any], meter: Any):
        self.policy_options = policy_options
        self.meter = RemoteMeter(meter)

    def episode(self, spec: EpisodeSpec, task: TaskSpec, master: int, wall_time: bool, hidden: bytes | None,
                run_key: str, pinned: list[str]) -> tuple[Any, bytes | None]:
        from pushbench.runner.api_exec import run_api_episode
        from pushbench.runner.episode import Unfinished

        scratch = Scratch(run_key, spec, task, hidden)
        events: list[dict[str, Any]] = []
        try:
            try:
                row = run_api_episode((spec, task, master, scratch.traces, wall_time), self.policy_options,
                                      self.meter, env_options={**scratch.options, "sink": events.append})
            except Exception as err:
                row = _error_episode(spec, task, scratch, events, err, pinned)
            if isinstance(row, Unfinished):
                return row, None
            return _finish(spec, row, scratch)
        finally:
            scratch.close()


class MeterActor:
    """The run's spend meter as a Ray actor: every API worker charges this one."""

    def __init__(self, max_cost: float | None, max_total_tokens: int | None, prices: Any):
        from pushbench.policies.spend import Meter

        self.meter = Meter(max_cost, max_total_tokens, prices)

    def admit(self) -> tuple[str, str] | None:
        from pushbench.policies.spend import RunHalted

        try:
            self.meter.admit()
        except RunHalted as halted:
            return halted.reason, halted.detail
        return None

    def charge(self, model: str, input_tokens: int, output_tokens: int, cached_tokens: int) -> None:
        self.meter.charge(model, input_tokens, output_tokens, cached_tokens)

    def hit(self) -> None:
        self.meter.hit()

    def halt(self, reason: str, detail: str) -> None:
        self.meter.halt(reason, detail)

    def state(self) -> Any:
        return self.meter.spend, self.meter.halted


class RemoteMeter:
    """A worker's handle on ``MeterActor`` with the ``Meter`` interface the chat policy uses."""

    def __init__(self, actor: Any):
        self.actor = actor

    def admit(self) -> None:
        import ray

        from pushbench.policies.spend import RunHalted

        halted = ray.get(self.actor.admit.remote())
        if halted is not None:
            raise RunHalted(*halted)

    def charge(self, model: str, input_tokens: int, output_tokens: int, cached_tokens: int = 0) -> None:
        self.actor.charge.remote(model, input_tokens, output_tokens, cached_tokens)

    def hit(self) -> None:
        self.actor.hit.remote()

    def halt(self, reason: str, detail: str) -> None:
        self.actor.halt.remote(reason, detail)


def sync_meter(ray: Any, actor: Any, meter: Any) -> None:
    """Copy the meter actor's totals back into the driver's meter (what the run spent)."""
    if meter is not None:
        spend, halted = ray.get(actor.state.remote())
        meter.spend = spend
        meter.halted = meter.halted or halted


def _error_episode(spec: EpisodeSpec, task: TaskSpec, scratch: Scratch, events: list[dict[str, Any]],
                   err: Exception, pinned: list[str]) -> dict[str, Any]:
    """The row and trace of an episode that raised, unless the node itself lacks the snapshots."""
    from pushbench.snapshots import SnapshotError
    from pushbench.tools.base import _traceback

    missing = [name for name in pinned if not (config.SNAPSHOT_SRC / name).is_dir()]
    if missing and isinstance(err, (OSError, SnapshotError)):
        raise NodeSetupError(f"Ray node {socket.gethostname()} has no snapshot {', '.join(missing)} under "
                             f"its project root; run `pushbench snapshots fetch` there (docs/ray.md)") from None
    write_trace(scratch.traces, Trace(spec.episode_id, events, objective=task.objective, messages=[],
                                      error=_traceback(err).replace(str(config.ROOT) + os.sep, "")))  # no absolute path
    return {"episode_id": spec.episode_id, **asdict(spec), "target": task.target, "budget": task.budget,
            "llm_calls": 0, "input_tokens": 0, "output_tokens": 0, VERIFIED: False}


def _finish(spec: EpisodeSpec, row: dict[str, Any], scratch: Scratch) -> tuple[dict[str, Any], bytes]:
    trace = scratch.take_trace()
    _kill_hook(spec.episode_id)
    return row, trace


def _kill_hook(episode_id: str) -> None:
    """Tests: die once, the episode done but not returned, when ``$PUSHBENCH_RAY_KILL_DIR`` names it."""
    folder = os.environ.get(KILL_HOOK)
    if not folder:
        return
    try:
        os.remove(Path(folder) / trace_name(episode_id))
    except FileNotFoundError:
        return
    os.kill(os.getpid(), signal.SIGKILL)
