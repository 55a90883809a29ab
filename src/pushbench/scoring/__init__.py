"""Scoring: every metric of an episode, computed from its trace, never while it runs.

A run folder holds ``episodes.jsonl`` (the raw facts of each episode: its conditions, target,
budget, LLM calls and tokens) and ``traces/`` (messages and verifier events). ``score_run`` reads
both with the task manifest and writes ``scored.jsonl`` (raw facts + metrics, one line per episode,
sorted) and ``summary.json`` beside them, so a new or changed metric re-scores old runs without
re-running an episode (``pushbench score RUN_DIR``; the DVC stage ``score@EXPERIMENT``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pushbench import config
from pushbench.log.models import FormatError, Trace
from pushbench.log.names import EPISODES, SCORED, SUMMARY, trace_path
from pushbench.log.rows import read_episodes
from pushbench.log.traces import read_trace as _read_trace
from pushbench.scoring.diagnostics import RepetitionRule, diagnose, family_deliverable
from pushbench.prices import PriceTable, load_prices
from pushbench.scoring.metrics import CONDITION, common_metrics, load_episodes, summarize
from pushbench.scoring.usage import episode_usage, usage_summary
from pushbench.tasks import get_family, load_tasks
from pushbench.tasks.base import TaskSpec, task_split

class ScoringError(ValueError):
    """A run folder that cannot be scored (no episodes, a missing trace or task)."""


def score_events(events: list[dict[str, Any]], task: TaskSpec, rule: RepetitionRule | None = None) -> dict[str, Any]:
    """The common metrics, the ACG diagnostics (``scoring.diagnostics``, the family's declared
    deliverable) and the family's own metrics (its ``episode_metrics`` hook)."""
    family = get_family(task.family)
    common = common_metrics(events, task.target, task.budget)
    found = diagnose(events, task.target, common["success"], family_deliverable(task.family), rule or repetition_rule())
    return {**common, "split": task_split(task), **found.row(), **family.episode_metrics(events, task)}


def repetition_rule() -> RepetitionRule:
    """params.yaml ``diagnostics.repetition`` (the defaults when the key is absent)."""
    try:
        return RepetitionRule.from_params(config.params("diagnostics.repetition"))
    except KeyError:
        return RepetitionRule()


def score_row(raw: dict[str, Any], events: list[dict[str, Any]], task: TaskSpec,
              rule: RepetitionRule | None = None, api: dict[str, Any] | None = None,
              prices: PriceTable | None = None) -> dict[str, Any]:
    """Raw facts + metrics + usage (``scoring.usage``; ``api`` is the trace's client block);
    ``tokens`` = input + output over every LLM call (auxiliary ones included)."""
    tokens = {"tokens": int(raw["input_tokens"]) + int(raw["output_tokens"])} \
        if "input_tokens" in raw and "output_tokens" in raw else {}
    return {**raw, **tokens, **episode_usage(raw, api, prices or PriceTable()), **score_events(events, task, rule)}


def read_trace(path: Path) -> Trace:
    if not path.is_file():
        raise ScoringError(f"no trace at {path}: re-run the experiment (its {EPISODES} lists the episode)")
    try:
        return _read_trace(path)
    except FormatError as err:
        raise ScoringError(str(err)) from None


def score_run(run_dir: Path, manifest_root: Path | None = None, prices: PriceTable | None = None) -> Path:
    """Write ``run_dir/scored.jsonl`` and ``run_dir/summary.json``; return the scored file.
    ``prices``: the table of ``cost_usd`` (default params.yaml ``prices``)."""
    run_dir = Path(run_dir)
    raw_path = run_dir / EPISODES
    if not raw_path.is_file():
        raise ScoringError(f"no episodes at {raw_path}; run the grid first")
    try:
        raws = [row.facts() for row in read_episodes(raw_path)]
    except FormatError as err:
        raise ScoringError(str(err)) from None
    tasks: dict[str, dict[str, TaskSpec]] = {}
    lines = []
    rule, prices = repetition_rule(), prices or load_prices()
    for raw in raws:
        family = raw["family"]
        if family not in tasks:
            tasks[family] = {t.task_id: t for t in load_tasks(family, manifest_root)}
        task = tasks[family].get(raw["task_id"])
        if task is None:
            raise ScoringError(f"task {raw['task_id']!r} of {raw_path} is not in the {family} manifest")
        trace = read_trace(trace_path(run_dir, raw["episode_id"]))
        lines.append(json.dumps(score_row(raw, trace.events, task, rule, trace.api, prices), sort_keys=True))
    out = run_dir / SCORED
    _write_atomic(out, "".join(line + "\n" for line in sorted(lines)))
    if raws:
        _write_atomic(run_dir / SUMMARY, json.dumps(summary_records(load_episodes(out)), sort_keys=True,
                                                           indent=1) + "\n")
    return out


def summary_records(episodes: Any, by: list[str] | None = None) -> list[dict[str, Any]]:
    """Per condition: the metrics of ``summarize`` and the usage of ``usage_summary``."""
    table = summarize(episodes, by)
    usage = usage_summary(episodes, by or CONDITION)
    if usage is not None:
        table = table.merge(usage, on=by or CONDITION, how="left")
    records = table.astype(object).where(table.notna(), None).to_dict(orient="records")
    return [{k: (v.item() if hasattr(v, "item") else v) for k, v in r.items()} for r in records]


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


__all__ = ["CONDITION", "SCORED", "ScoringError", "load_episodes", "read_trace", "score_events", "score_row",
           "score_run", "summarize", "summary_records"]
