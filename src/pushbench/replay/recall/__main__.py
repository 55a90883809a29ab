"""The ``recall`` DVC stage: evidence recall of every memory over the ACG comparison runs.

For each run named in ``params.yaml`` ``recall.runs``, an even sample of its episodes (every k-th
by id, ``recall.episodes`` in all) is replayed through each memory of ``recall.memories`` at
``recall.budget`` tokens (and the window sweep's runs at each of ``recall.sweep.budgets``), in ``run.workers`` processes (chunks of episodes; the same rows in one); ``data/results/recall.jsonl`` gets one sorted-key row per (run, family,
memory, action bucket) with the decisions, needed and recalled evidence units and the share.
No model is involved: this measures the memories themselves.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

from rich.progress import track

from pushbench import config
from pushbench.log.names import EPISODES
from pushbench.log.rows import read_episodes
from pushbench.replay.recall import BUCKETS, RecallResult, run_recall


def sampled_ids(run_dir: Path, episodes: int, model: str | None = None, memory: str | None = None) -> list[str]:
    """Every k-th episode id (``episodes`` in all), of the episodes with ``model`` and ``memory``
    if named. Ids sort by task first, so a stride that is a multiple of the conditions per task
    picks one condition's episodes: the sample spreads over tasks, not conditions."""
    ids = sorted(row.episode_id for row in read_episodes(run_dir / EPISODES)
                 if (model is None or row.model == model) and (memory is None or row.memory == memory))
    stride = max(1, math.ceil(len(ids) / max(1, episodes)))
    return ids[::stride][:episodes]


def rows_of(run: str, family: str, result: RecallResult, split: str = "short") -> list[dict]:
    frame = result.frame()
    lows = {f"{low}+" if high is None else f"{low}-{high}": low for low, high in BUCKETS}
    out = []
    for (memory, bucket), group in frame.groupby(["memory", "bucket"], sort=True):
        needed, recalled = int(group.needed.sum()), int(group.recalled.sum())
        out.append({"run": run, "family": family, "memory": memory, "bucket": bucket,
                    "first_action": lows[bucket], "decisions": len(group), "needed": needed,
                    "recalled": recalled, "share": round(recalled / needed, 6) if needed else None,
                    "budget": result.budget, "split": split})
    return out


CHUNK = 15  # episodes per job: the six runs' replays differ in cost, so they are cut finer than per run


Job = tuple[Path, list[str], list[str], int]  # run folder, episode ids, memories, budget


def _recall(job: Job) -> RecallResult:
    run_dir, ids, memories, budget = job
    return run_recall(run_dir, memories, budget, select=set(ids).__contains__)


def recall_jobs(jobs: list[Job], workers: int) -> list[RecallResult]:
    """Each job's result, in job order (the same in one process or several)."""
    if workers <= 1 or len(jobs) <= 1:
        return [_recall(job) for job in track(jobs, description="recall", disable=not os.isatty(2))]
    import multiprocessing as mp

    from pushbench.tokens import encoding

    encoding()  # the vocabulary, loaded once before the fork
    with mp.get_context("fork").Pool(workers) as pool:
        return list(track(pool.imap(_recall, jobs, chunksize=1), total=len(jobs), description="recall",
                          disable=not os.isatty(2)))


def merge(budget: int, memories: list[str], parts: list[RecallResult]) -> RecallResult:
    """The result of one run from its chunks' (contiguous slices of its sorted episode ids)."""
    out = RecallResult(budget, memories)
    for part in parts:
        out.decisions += part.decisions
        out.episodes += part.episodes
        out.missing_traces += part.missing_traces
        out.mismatched_memory_replies += part.mismatched_memory_replies
    return out


Replay = tuple[str, int, int, "str | None"]  # run, budget, episodes, the model whose traces (None: any)


def planned(settings: dict) -> list[Replay]:
    """(run, budget, episodes, model) for every replay: ``runs`` at ``budget``, and the window
    sweep's ``sweep.runs`` at each of ``sweep.budgets``: the same episodes at every budget, those of
    ``sweep.model`` with the full transcript (the reference reader's traces reach every decision)."""
    out: list[Replay] = [(run, int(settings["budget"]), int(settings["episodes"]), None) for run in settings["runs"]]
    sweep = settings.get("sweep") or {}
    out += [(run, int(budget), int(sweep["episodes"]), sweep.get("model"))
            for run in sweep.get("runs", ()) for budget in sweep["budgets"]]
    return out


def main(workers: int | None = None) -> Path:
    settings = config.params("recall")
    memories = list(settings["memories"])
    plan = planned(settings)
    jobs = []
    for run, budget, episodes, model in plan:
        ids = sampled_ids(config.RUNS / run, episodes, model, "full" if model else None)
        jobs += [(config.RUNS / run, ids[i: i + CHUNK], memories, budget) for i in range(0, len(ids), CHUNK)]
    results = recall_jobs(jobs, workers or int(config.params("run.workers")))
    rows: list[dict] = []
    for run, budget, _, _ in plan:
        parts = [result for job, result in zip(jobs, results) if job[0] == config.RUNS / run and job[3] == budget]
        spec = config.params(f"experiments.{run}")
        rows += rows_of(run, spec["family"], merge(budget, memories, parts), spec.get("split", "short"))
    out = config.RESULTS / "recall.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, out)
    return out


if __name__ == "__main__":
    print(f"evidence recall -> {os.path.relpath(main(), config.ROOT)}")
