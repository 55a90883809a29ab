"""The black-box grid (PushBench App. D.2): RepoScan tasks at N = 50 and 100 × agents × prompts.

Rows go to ``OUT/episodes.jsonl`` in the runner's format (append-only, resumable, sorted at the
end); each episode's folder is ``OUT/episodes/<episode>/`` and its trace (events, exit code, wall
time) ``OUT/traces/``. ``checklist_deltas`` gives the paired checklist-minus-default success
difference per agent and N (Table 7), matched by task and seed.
"""

from __future__ import annotations

import shutil
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator, cast

from pushbench.harness import zygote
from pushbench.harness.launcher import STANDIN_PREFIX, AgentSpec, EpisodePlan, run_agent_episode
from pushbench.harness.prompts import PROMPTS
from pushbench.log.models import EpisodeRow, Trace
from pushbench.log.names import EPISODES, TRACES, trace_stem
from pushbench.log.rows import append_row, read_done, sort_jsonl
from pushbench.log.traces import write_trace
from pushbench.runner.lock import run_lock
from pushbench.tasks import load_tasks
from pushbench.tasks.base import TaskSpec

if TYPE_CHECKING:  # pandas and the statistics load only for the deltas, not for running the grid
    import pandas as pd


def grid_tasks(targets: list[int], n_tasks: int, manifests: Path | None = None) -> list[TaskSpec]:
    """``n_tasks`` RepoScan tasks split evenly over ``targets`` (the first ones by id per target)."""
    if not targets or n_tasks < len(targets) or n_tasks % len(targets):
        raise ValueError(f"--tasks {n_tasks} must be a positive multiple of the {len(targets)} targets")
    per_target = n_tasks // len(targets)
    tasks = load_tasks("reposcan", manifests)
    chosen: list[TaskSpec] = []
    for target in targets:
        pool = sorted((t for t in tasks if t.target == target), key=lambda t: t.task_id)
        if len(pool) < per_target:
            targets_known = ", ".join(map(str, sorted({t.target for t in tasks})))
            raise ValueError(f"only {len(pool)} RepoScan tasks have N = {target}; {per_target} requested "
                             f"(targets that exist: {targets_known})")
        chosen.extend(pool[:per_target])
    return chosen


def grid_plans(tasks: list[TaskSpec], agents: list[AgentSpec], prompts: list[str], seeds: int,
               base: EpisodePlan) -> list[EpisodePlan]:
    unknown = [p for p in prompts if p not in PROMPTS]
    if unknown:
        raise ValueError(f"unknown prompts {unknown}; choose from {', '.join(PROMPTS)}")
    return [replace(base, task=t, agent=a, prompt=p, seed=s)
            for t in tasks for a in agents for p in prompts for s in range(seeds)]


def episode_folder(out: Path, plan: EpisodePlan) -> Path:
    return out / "episodes" / trace_stem(plan.spec.episode_id)


def _run_one(out: Path, plan: EpisodePlan) -> dict[str, Any]:
    folder = episode_folder(out, plan)
    shutil.rmtree(folder, ignore_errors=True)  # a half-run episode from a killed grid starts over
    outcome = run_agent_episode(plan, folder)
    if plan.zygote is not None and not zygote.alive(plan.zygote):  # its processes may have been cut short
        raise RuntimeError(f"a fork server died during {plan.spec.episode_id}; run the grid again (it resumes)")
    write_trace(out / TRACES, Trace(plan.spec.episode_id, outcome.events, agent=plan.agent.name, prompt=plan.prompt,
                                    exit_code=outcome.exit_code, timed_out=outcome.timed_out,
                                    wall_seconds=outcome.wall_seconds))
    return outcome.row


def _rows(out: Path, plans: list[EpisodePlan], workers: int) -> Iterator[dict[str, Any]]:
    if workers <= 1:
        yield from (_run_one(out, p) for p in plans)
        return
    with ThreadPoolExecutor(max_workers=workers) as pool:  # each episode is its own processes
        yield from pool.map(lambda p: _run_one(out, p), plans)


def run_plans(plans: Iterable[EpisodePlan], out: Path, workers: int = 1, fork_server: bool = False) -> Path:
    """Run the episodes not yet in ``OUT/episodes.jsonl``; append each row as it finishes.

    With ``fork_server``, the stand-in agents and their stdio MCP servers are forked from one
    zygote (harness/zygote.py) instead of each starting an interpreter and its imports."""
    with run_lock(out):  # one run per folder, as for `pushbench run`
        path = out / EPISODES
        done = read_done(path)
        todo = [p for p in plans if p.spec.episode_id not in done]
        with ExitStack() as stack:
            if fork_server and any(_forkable(p) for p in todo):
                folder = stack.enter_context(zygote.running(out, _indexes(todo)))
                if folder is not None:
                    todo = [replace(p, zygote=folder) if _forkable(p) else p for p in todo]
            with open(path, "a", encoding="utf-8") as sink:
                for row in _rows(out, todo, workers):
                    append_row(sink, EpisodeRow.from_facts(row))
        sort_jsonl(path)
    return path


def _indexes(plans: list[EpisodePlan]) -> list[zygote.Index]:
    """The search indexes the grid's servers use: snapshot trees as the server resolves them."""
    return sorted({zygote.Index(str(Path(p.snapshot_root).resolve()), cast(str, p.task.repo), int(p.task.settings["max_results"]),
                                int(p.task.settings["page_size"])) for p in plans if _forkable(p)},
                  key=lambda i: (i.repo, i.snapshot_root, i.max_results, i.page_size))


def _forkable(plan: EpisodePlan) -> bool:
    """A stand-in over stdio: both of its processes are zygote entry points."""
    return plan.agent.product is None and plan.transport == "stdio" and plan.agent.name.startswith(STANDIN_PREFIX)


def checklist_deltas(episodes: pd.DataFrame, a: str = "default", b: str = "checklist",
                     n_resamples: int = 10_000, seed: int = 0) -> pd.DataFrame:
    """Paired success delta ``b - a`` per (agent, model, N), matched by task and seed, with a
    task-cluster bootstrap 95% interval; the success counts of both prompts beside it."""
    import pandas as pd

    from pushbench.analysis.stats import paired_bootstrap_delta

    rows = []
    blackbox = episodes[episodes["backend"] == "blackbox"]
    for (agent, model, target), group in blackbox.groupby(["agent", "model", "target"], sort=True):
        delta = paired_bootstrap_delta(group, "controller", a, b, "success", ("task_id", "seed"),
                                       n_resamples=n_resamples, seed=seed)
        counts = group.groupby("controller")["success"].sum()
        rows.append({"agent": agent, "model": model, "target": int(target), f"success_{a}": int(counts[a]),
                     f"success_{b}": int(counts[b]), "pairs": delta.n_pairs, "delta": round(delta.delta, 4),
                     "ci_low": round(delta.ci_low, 4), "ci_high": round(delta.ci_high, 4)})
    return pd.DataFrame(rows)
