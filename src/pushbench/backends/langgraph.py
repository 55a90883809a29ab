"""The LangGraph backend: the native episode as a ``StateGraph`` with a SQLite checkpointer.

Nodes ``policy -> controller -> tools`` call the same three parts as ``native.step``
(``take_turn``, ``control``, ``apply``), so the same task, policy and seed give the same actions
and verified outcome. The graph state holds only serialisable data: the transcript (a
``DeltaChannel``, so a checkpoint stores each new message once instead of the whole list) and a
small status (the controller's decision awaiting the tools, the counters, the done flag). The turn the controller
and tools act on is parsed from the transcript's last assistant message (the transcript is the
source of truth). The environment, policy, controller and memory live outside the state, in the
run's ``context``. The graph is compiled once per process and copied onto each episode's
checkpointer.

Resume: a thread whose last checkpoint is mid-episode is continued. The live objects are rebuilt
by replaying the checkpointed transcript through the same functions with the recorded turns in
place of the policy (no model calls), and the replay must reproduce every recorded observation.
Checkpoints are committed in groups (``CheckpointSaver``), so a killed process resumes from a
checkpoint at most ``COMMIT_INTERVAL`` old. A finished episode's thread is deleted, so the
database holds only episodes in progress.
"""

from __future__ import annotations

import functools
import sqlite3
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Iterator, Sequence, TypedDict

from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from pushbench.backends.native import Decision, EpisodeRun, apply, control, start_memory, stopped, take_turn
from pushbench.controllers import Controller
from pushbench.memory import ContextBuilder
from pushbench.policies.base import Policy, PolicyStop, Turn, turn_from_message
from pushbench.tools.base import Environment, ToolCall

CHECKPOINT_FILE = "checkpoints.sqlite"
COMMIT_INTERVAL = 0.05  # seconds of progress a killed process may lose (it resumes from before them)


def _extend(state: list[dict[str, Any]], writes: Sequence[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    out = list(state)
    for batch in writes:
        out.extend(batch)
    return out


def _wrap(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Transcript entries as ``{"message": m}``: LangGraph would turn bare chat dicts in a
    DeltaChannel into LangChain message objects with random ids; the transcript must stay as sent."""
    return [{"message": m} for m in messages]


class EpisodeState(TypedDict, total=False):
    transcript: Annotated[list[dict[str, Any]], DeltaChannel(_extend)]  # every message, once (wrapped)
    # decision: the controller's decision on the last turn, awaiting the tools; counters: llm_calls,
    # input_tokens, output_tokens; done. One channel, so each node saves one small write.
    status: dict[str, Any]


@dataclass
class Episode:
    """The live, non-serialisable side of one episode (the graph run's context)."""

    run: EpisodeRun
    policy: Policy
    controller: Controller
    memory: ContextBuilder
    tools: list[dict[str, Any]]
    seed: int


# --------------------------------------------------------------------------- (de)serialisation

def dump_decision(decision: Decision) -> dict[str, Any]:
    call = decision.call
    return {"kind": decision.kind, "text": decision.text,
            "call": None if call is None else {"name": call.name, "arguments": call.arguments, "call_id": call.call_id}}


def load_decision(data: dict[str, Any]) -> Decision:
    call = data.get("call")
    return Decision(data["kind"], None if call is None else ToolCall(call["name"], call["arguments"], call["call_id"]),
                    data.get("text", ""))


# --------------------------------------------------------------------------- nodes

def policy_node(state: EpisodeState, runtime: Runtime[Episode]) -> dict[str, Any]:
    ep = runtime.context
    before = len(ep.run.transcript)
    take_turn(ep.run, ep.policy, ep.memory, ep.tools, ep.seed)
    # the memory's own calls and requests of this turn too: the checkpoint holds the whole transcript
    return {"transcript": _wrap(ep.run.transcript[before:]), "status": _status(ep.run, None)}


def _last_turn(state: EpisodeState) -> Turn:
    """The turn awaiting the controller and tools: the transcript's last (assistant) message."""
    return turn_from_message(state["transcript"][-1]["message"])


def controller_node(state: EpisodeState, runtime: Runtime[Episode]) -> dict[str, Any]:
    ep = runtime.context
    decision = dump_decision(control(_last_turn(state), ep.controller, ep.run.env))
    return {"status": _status(ep.run, decision)}


def tools_node(state: EpisodeState, runtime: Runtime[Episode]) -> dict[str, Any]:
    ep = runtime.context
    before = len(ep.run.transcript)
    apply(ep.run, _last_turn(state), load_decision(state["status"]["decision"]), ep.controller, ep.memory)
    return {"transcript": _wrap(ep.run.transcript[before:]), "status": _status(ep.run, None)}


def _status(run: EpisodeRun, decision: dict[str, Any] | None) -> dict[str, Any]:
    return {"decision": decision, "done": run.env.done, "counters": {
        "llm_calls": run.llm_calls, "input_tokens": run.input_tokens, "output_tokens": run.output_tokens}}


def _next(state: EpisodeState) -> str:
    return END if state["status"]["done"] else "policy"


def build_graph(checkpointer: SqliteSaver) -> Any:
    """The episode graph on ``checkpointer`` (a copy of the graph compiled once per process)."""
    return _compiled().copy({"checkpointer": checkpointer})


@functools.cache
def _compiled() -> Any:
    graph = StateGraph(EpisodeState, context_schema=Episode)
    graph.add_node("policy", policy_node)
    graph.add_node("controller", controller_node)
    graph.add_node("tools", tools_node)
    graph.add_edge(START, "policy")
    graph.add_edge("policy", "controller")
    graph.add_edge("controller", "tools")
    graph.add_conditional_edges("tools", _next, ["policy", END])
    return graph.compile()


# --------------------------------------------------------------------------- resume

class _Replay:
    """Stands in for the policy during a replay: answers with the recorded assistant messages."""

    def __init__(self, policy: Policy, messages: list[dict[str, Any]]):
        self.name, self.context_window = policy.name, policy.context_window
        self._messages = iter(messages)

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], seed: int) -> Turn:
        return turn_from_message(next(self._messages))


class CheckpointMismatch(RuntimeError):
    """A checkpoint that does not replay on the given task, controller and memory."""


def restore(ep: Episode, values: dict[str, Any]) -> None:
    """Bring the live objects to the checkpoint by replaying its transcript without the model."""
    messages = [entry["message"] for entry in values.get("transcript") or []]
    status = values.get("status") or {}
    # A turn is pending when the checkpoint lies after the policy node: its assistant message
    # is last and the episode has not ended on it.
    pending = bool(messages) and messages[-1].get("role") == "assistant" and not status.get("done")
    done_part = messages[:-1] if pending else messages
    replay = _Replay(ep.policy, [m for m in messages if m.get("role") == "assistant"])
    run = ep.run
    while len(run.transcript) < len(done_part) and not run.env.done:
        turn = take_turn(run, replay, ep.memory, ep.tools, ep.seed)
        apply(run, turn, control(turn, ep.controller, run.env), ep.controller, ep.memory)
    if run.transcript != done_part:
        raise CheckpointMismatch("the checkpointed transcript does not replay on this task, controller "
                                 "and memory (was the thread id reused for another episode?)")
    if pending:
        turn = take_turn(run, replay, ep.memory, ep.tools, ep.seed)
        if status.get("decision") is not None:  # the controller had run: redo it for its state
            if dump_decision(control(turn, ep.controller, run.env)) != status["decision"]:
                raise CheckpointMismatch("the controller decides differently on replay")
    counters = status.get("counters") or {}
    run.llm_calls = int(counters.get("llm_calls", 0))
    run.input_tokens = int(counters.get("input_tokens", 0))
    run.output_tokens = int(counters.get("output_tokens", 0))


# --------------------------------------------------------------------------- entry point

class CheckpointSaver(SqliteSaver):
    """``SqliteSaver`` with group commit: a write is committed within ``COMMIT_INTERVAL`` seconds,
    together with the writes around it, instead of each node's writes and each checkpoint alone.

    All writes go through one connection in order, so every commit is a consistent prefix of the
    run, and a killed process resumes from a checkpoint at most ``COMMIT_INTERVAL`` old (replayed
    exactly; see ``restore``). A timer commits what a quiet spell (a slow model call) leaves
    pending. Commits were most of the checkpointer's cost per step.
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        super().__init__(conn)
        self._last_commit = time.monotonic()
        self._timer: threading.Timer | None = None
        self._closed = False

    @contextmanager
    def cursor(self, transaction: bool = True) -> Iterator[sqlite3.Cursor]:
        with super().cursor(transaction=False) as cur:  # holds self.lock
            yield cur
            if transaction and self.conn.in_transaction:
                if time.monotonic() - self._last_commit >= COMMIT_INTERVAL:
                    self.commit_now()
                elif self._timer is None:
                    self._timer = threading.Timer(COMMIT_INTERVAL, self._flush)
                    self._timer.daemon = True
                    self._timer.start()

    def _flush(self) -> None:
        with self.lock:
            self._timer = None
            if not self._closed and self.conn.in_transaction:
                self.commit_now()

    def commit_now(self) -> None:
        """Commit what is pending (call with ``self.lock`` held)."""
        self.conn.commit()
        self._last_commit = time.monotonic()

    def close(self) -> None:
        with self.lock:
            self._closed = True
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self.commit_now()  # also after an error: what SqliteSaver would have kept


@contextmanager
def open_saver(path: Path | None) -> Iterator[CheckpointSaver]:
    """A SQLite checkpointer on ``path`` (a throw-away file when None)."""
    if path is None:
        with tempfile.TemporaryDirectory(prefix="pushbench-lg-") as tmp:
            with _saver_on(Path(tmp) / CHECKPOINT_FILE) as saver:
                yield saver
    else:
        with _saver_on(Path(path)) as saver:
            yield saver


@contextmanager
def _saver_on(target: Path) -> Iterator[CheckpointSaver]:
    target.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(target), check_same_thread=False, timeout=60)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")  # survives a killed process; no fsync per step
        saver = CheckpointSaver(conn)
        try:
            yield saver
        finally:
            saver.close()
    finally:
        conn.close()


def thread_id_for(env: Environment, policy: Policy, controller: Controller, memory: ContextBuilder,
                  seed: int) -> str:
    return "|".join([env.task.task_id, controller.name, memory.name, policy.name, "langgraph", f"s{seed}"])


def _invoke(graph: Any, value: Any, config: dict[str, Any], ep: Episode) -> None:
    # "sync": each checkpoint is saved in this thread before the next step; the "async" default
    # hands every save to a background thread, whose handoff cost more CPU than the save itself
    try:
        graph.invoke(value, config, context=ep, durability="sync")
    except PolicyStop as stop:  # the model cannot go on: the episode ends with its reason
        stopped(ep.run, ep.memory, stop)


def run_langgraph(env: Environment, policy: Policy, controller: Controller, memory: ContextBuilder,
                  seed: int, *, checkpoint: Path | None = None, thread_id: str | None = None,
                  keep_thread: bool = False, remove_when_done: bool = False) -> EpisodeRun:
    """Run (or resume) one episode; ``checkpoint`` is the SQLite file that makes it resumable.

    A finished episode's thread is deleted unless ``keep_thread``; with ``remove_when_done`` (a
    file of this episode's own, as the runner uses) the file goes too once it holds no thread.
    """
    thread = thread_id or thread_id_for(env, policy, controller, memory, seed)
    start_memory(memory, controller, env)
    ep = Episode(EpisodeRun(env), policy, controller, memory, env.schemas(), seed)
    config = {"configurable": {"thread_id": thread}, "recursion_limit": 3 * (env.task.budget + 2) + 10}
    empty = False
    fresh = checkpoint is None or not Path(checkpoint).exists()  # a new file holds no thread to resume
    with open_saver(checkpoint) as saver:
        graph = build_graph(saver)
        snapshot = None if fresh else graph.get_state(config)
        if snapshot is not None and snapshot.values:
            restore(ep, snapshot.values)
            # Not ``snapshot.next``: a node whose writes were saved but whose checkpoint was not
            # counts as run, so ``next`` can be empty on an unfinished episode.
            if not snapshot.values["status"]["done"]:
                _invoke(graph, None, config, ep)
        else:
            _invoke(graph, {"transcript": [], "status": _status(ep.run, None)}, config, ep)
        if not keep_thread:
            saver.delete_thread(thread)
            empty = saver.conn.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0] == 0
    if remove_when_done and empty and checkpoint is not None:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{checkpoint}{suffix}").unlink(missing_ok=True)
    return ep.run
