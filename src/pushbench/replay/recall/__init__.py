"""Evidence recall: how much of the evidence each recorded decision needed a memory's view holds.

No model is involved. For every episode of a run folder, the trace's transcript is replayed
(``replay``) through a fresh builder of each named memory at one budget; before each decision
(a submit) the rendered view is checked for the decision's needed units (``evidence``). The share
of needed units present is the memory's recall, overall and by history length (the decision's
action number, in the buckets of ``BUCKETS``). This measures the memory itself, independent of
SimLM: every memory sees the same recorded decisions and observations.

``run_recall`` returns a :class:`RecallResult`; ``summary`` and ``recall_by_length`` turn it into
pandas tables (the latter is the notebook figure's data).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from pushbench.log.models import FormatError
from pushbench.log.names import EPISODES, trace_path
from pushbench.log.rows import read_episodes
from pushbench.log.traces import read_trace
from pushbench.memory.base import memory_tools
from pushbench.replay.recall.evidence import evidence_rule, view_text
from pushbench.replay.recall.replay import Recording, ReplayStats, replay
from pushbench.policies.base import turn_from_message
from pushbench.registry import CONTROLLERS, MEMORIES, UnknownName
from pushbench.tasks.base import TaskSpec

MIN_BUDGET = 256  # tokens; below this no view holds even the task
BUCKETS = ((1, 20), (21, 40), (41, 60), (61, 100), (101, None))  # decision's action number, as ACG's 20-action bins


class RecallError(ValueError):
    """Bad input to a recall run (the message is one line for the user)."""


@dataclass(frozen=True)
class DecisionRecall:
    episode_id: str
    memory: str
    action: int  # the decision's action number (1 = the episode's first action)
    needed: tuple[str, ...]  # needed unit ids
    recalled: tuple[str, ...]  # those present in the view

    @property
    def bucket(self) -> str:
        return bucket_of(self.action)


@dataclass
class RecallResult:
    budget: int
    memories: list[str]
    decisions: list[DecisionRecall] = field(default_factory=list)
    episodes: int = 0
    missing_traces: int = 0
    mismatched_memory_replies: int = 0  # replayed memory calls whose reply differs from the recorded one

    def frame(self) -> pd.DataFrame:
        """One row per (memory, decision)."""
        rows = [{"memory": d.memory, "episode_id": d.episode_id, "action": d.action, "bucket": d.bucket,
                 "needed": len(d.needed), "recalled": len(d.recalled)} for d in self.decisions]
        return pd.DataFrame(rows, columns=["memory", "episode_id", "action", "bucket", "needed", "recalled"])


def bucket_of(action: int) -> str:
    for low, high in BUCKETS:
        if high is None or action <= high:
            return f"{low}+" if high is None else f"{low}-{high}"
    raise AssertionError("unreachable")


def _totals(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    out = frame.groupby(keys, sort=False).agg(decisions=("action", "size"), needed=("needed", "sum"),
                                              recalled=("recalled", "sum")).reset_index()
    out["share"] = (out["recalled"] / out["needed"].where(out["needed"] > 0)).astype(float)
    return out


def summary(result: RecallResult) -> pd.DataFrame:
    """Per memory: decisions, needed units, recalled units, share recalled."""
    frame = result.frame()
    table = _totals(frame, ["memory"]) if len(frame) else pd.DataFrame(
        columns=["memory", "decisions", "needed", "recalled", "share"])
    return table.set_index("memory").reindex(result.memories).fillna({"decisions": 0, "needed": 0, "recalled": 0}) \
        .reset_index().astype({"decisions": int, "needed": int, "recalled": int})


def recall_by_length(result: RecallResult) -> pd.DataFrame:
    """Recall vs history length per memory: memory, bucket, decisions, needed, recalled, share."""
    frame = result.frame()
    if not len(frame):
        return pd.DataFrame(columns=["memory", "bucket", "decisions", "needed", "recalled", "share"])
    order = {m: i for i, m in enumerate(result.memories)}
    labels = [bucket_of(low) for low, _ in BUCKETS]
    table = _totals(frame, ["memory", "bucket"])
    table["_m"], table["_b"] = table["memory"].map(order), table["bucket"].map(labels.index)
    return table.sort_values(["_m", "_b"]).drop(columns=["_m", "_b"]).reset_index(drop=True)


# --------------------------------------------------------------------------- running


def recall_episode(recording: Recording, memory: str, budget: int, env: Any, family: str, episode_id: str,
                   stats: ReplayStats | None = None) -> list[DecisionRecall]:
    """Replay one recording through a fresh ``memory`` and judge each decision's view."""
    rule = evidence_rule(family)
    if rule is None:
        raise RecallError(f"family {family!r} declares no evidence rule (Declaration.evidence)")
    stats = stats if stats is not None else ReplayStats()
    out = []
    for turn in replay(recording, MEMORIES.make(memory), budget, env, stats):
        call = turn_from_message(turn.message).call
        if call is None:
            continue
        try:
            arguments = call.arguments if isinstance(call.arguments, dict) else json.loads(call.arguments or "{}")
        except json.JSONDecodeError:
            arguments = None
        needed = rule.needed(call.name, arguments, stats.observations, recording.objective)
        if needed is None:
            continue
        text = view_text(turn.view)
        out.append(DecisionRecall(episode_id, memory, turn.step + 1, tuple(n.unit for n in needed),
                                  tuple(n.unit for n in needed if n.present(text))))
    return out


def recorded_window(model: str) -> int | None:
    from pushbench.policies import make_policy

    try:
        return int(make_policy(model).context_window)
    except Exception:  # an API model without its settings here: the window is unknown
        return None


def load_recording(row: dict[str, Any], trace_file: Path, window: int | None) -> Recording:
    """The replay's view of one episode: its row of episodes.jsonl and its trace."""
    try:
        trace = read_trace(trace_file)
    except FormatError as err:
        raise RecallError(str(err)) from None
    own_tools = frozenset(t["function"]["name"] for t in memory_tools(MEMORIES.make(row["memory"])))
    return Recording(trace.transcript, trace.objective or "", CONTROLLERS.make(row["controller"]), row["memory"],
                     own_tools, window)


def _load_rows(run_dir: Path) -> list[dict[str, Any]]:
    path = run_dir / EPISODES
    if not path.is_file():
        raise RecallError(f"{run_dir} has no {EPISODES} (not a run folder)")
    try:
        rows = [row.facts() for row in read_episodes(path)]
    except FormatError as err:
        raise RecallError(str(err)) from None
    return sorted(rows, key=lambda r: r["episode_id"])


def check_memories(memories: list[str]) -> None:
    if not memories:
        raise RecallError("name at least one memory")
    for name in memories:
        try:
            MEMORIES.entry(name)
        except UnknownName as err:
            raise RecallError(str(err)) from None


def run_recall(run_dir: Path, memories: list[str], budget: int, *, limit: int | None = None,
               select: Callable[[str], bool] | None = None, tasks: dict[str, TaskSpec] | None = None,
               make_env: Callable[[TaskSpec], Any] | None = None) -> RecallResult:
    """Evidence recall of ``memories`` at ``budget`` tokens over the episodes of ``run_dir``.

    ``select`` keeps only the episodes whose id it accepts. ``tasks`` (default: the manifests) and ``make_env`` (default: the family's environment, used
    only for its requirements and origins) can be given, e.g. by tests.
    """
    check_memories(memories)
    if budget < MIN_BUDGET:
        raise RecallError(f"--budget must be at least {MIN_BUDGET} tokens, got {budget}")
    rows = [r for r in _load_rows(Path(run_dir)) if select is None or select(r["episode_id"])][:limit]
    result = RecallResult(budget, list(memories))
    envs = _Environments(tasks, make_env)
    windows: dict[str, int | None] = {}
    try:
        for row in rows:
            path = trace_path(Path(run_dir), row["episode_id"])
            if not path.is_file():
                result.missing_traces += 1
                continue
            if evidence_rule(row["family"]) is None:
                raise RecallError(f"family {row['family']!r} declares no evidence rule (Declaration.evidence)")
            if row["model"] not in windows:
                windows[row["model"]] = recorded_window(row["model"])
            recording = load_recording(row, path, windows[row["model"]])
            env = envs.get(row["family"], row["task_id"])
            for memory in memories:
                stats = ReplayStats()
                result.decisions += recall_episode(recording, memory, budget, env, row["family"], row["episode_id"],
                                                   stats)
                result.mismatched_memory_replies += stats.mismatched_replies
            result.episodes += 1
    finally:
        envs.close()
    return result


class _Environments:
    """One environment per task (only its requirements and origins are used), closed at the end."""

    def __init__(self, tasks: dict[str, TaskSpec] | None, make_env: Callable[[TaskSpec], Any] | None):
        self.tasks, self.make_env = tasks, make_env
        self.made: dict[str, Any] = {}

    def get(self, family: str, task_id: str) -> Any:
        if task_id not in self.made:
            self.made[task_id] = self._make(self._task(family, task_id))
        return self.made[task_id]

    def _task(self, family: str, task_id: str) -> TaskSpec:
        if self.tasks is None:
            self.tasks = {}
        if task_id not in self.tasks:
            from pushbench.tasks import load_tasks

            try:
                self.tasks.update({t.task_id: t for t in load_tasks(family)})
            except FileNotFoundError as err:
                raise RecallError(str(err)) from None
        if task_id not in self.tasks:
            raise RecallError(f"task {task_id!r} is not in the {family} manifest")
        return self.tasks[task_id]

    def _make(self, task: TaskSpec) -> Any:
        if self.make_env is not None:
            return self.make_env(task)
        from pushbench.tasks import get_family

        return get_family(task.family).environment(task)

    def close(self) -> None:
        for env in self.made.values():
            env.end("give_up")


__all__ = ["BUCKETS", "DecisionRecall", "RecallError", "RecallResult", "bucket_of", "load_recording",
           "recall_by_length", "recall_episode", "recorded_window", "run_recall", "summary"]
