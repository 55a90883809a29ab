"""Forks on the LangGraph backend: branch the episode's checkpoint history at step K.

A finished LangGraph episode deletes its thread (``backends.langgraph``), so no checkpoint of a
recorded episode is left on disk, and a native episode never had one. The fork therefore first
replays the recording deterministically into a fresh checkpointer: the episode graph runs under
the recorded controller and memory with the recorded assistant messages in place of the model (no
model call) and stops when the recording's first K steps are used up. Every superstep is
checkpointed as in a real run; ``get_state_history`` then gives the checkpoint after the K-th
``tools`` node (before the policy's next turn), and its transcript must equal the recording up to
there, else :class:`ForkError`.

The fork branches from that checkpoint the way LangGraph forks (``update_state`` on a past
checkpoint makes a new checkpoint beside the original history, then ``invoke(None, branch)``
runs on): the branch's status holds the fork's own counters, and the graph's context is the fork's
live objects, brought to step K by ``fork.replay_prefix`` (fresh environment, the new controller,
memory and model). The branch's transcript channel keeps the recorded prefix it grew from; the
fork's trace is its own transcript (which is the recorded prefix too when the memory and model are
the recorded ones).
"""

from __future__ import annotations

from typing import Any

from langgraph.types import StateSnapshot

from pushbench.replay import fork as forks
from pushbench.backends.langgraph import Episode, _invoke, _status, build_graph, open_saver
from pushbench.backends.native import EpisodeRun, start_memory
from pushbench.log.models import Trace
from pushbench.policies.base import Turn, turn_from_message
from pushbench.registry import CONTROLLERS, MEMORIES
from pushbench.tasks import get_family


class _AtForkPoint(Exception):
    """The recorded steps before the fork are used up: the replay graph stops here."""


class _Recorded:
    """Stands in for the model during the replay: the recorded assistant messages, in order
    (actions, memory calls and a memory's own requests alike), then stop."""

    def __init__(self, name: str, context_window: int, messages: list[dict[str, Any]]) -> None:
        self.name, self.context_window = name, context_window
        self._messages = iter(messages)

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], seed: int) -> Turn:
        message = next(self._messages, None)
        if message is None:
            raise _AtForkPoint
        return turn_from_message(message)


def prefix_end(turns: list[Any], k: int) -> int:
    """Transcript index just after the K-th recorded step's observation (0 for K = 0)."""
    return 0 if k == 0 else turns[k - 1].reply + 1


def _messages(values: dict[str, Any]) -> list[dict[str, Any]]:
    return [entry["message"] for entry in values.get("transcript") or []]


def checkpoint_at(graph: Any, config: dict[str, Any], k: int) -> StateSnapshot:
    """The checkpoint after the K-th ``tools`` node (K = 0: after START), before the next policy turn."""
    ready = [s for s in reversed(list(graph.get_state_history(config))) if s.next == ("policy",)]
    if len(ready) <= k:
        raise forks.ForkError(f"the replayed checkpoint history has {len(ready) - 1} steps, fewer than --at {k}")
    return ready[k]


def _diverged(got: list[dict[str, Any]], want: list[dict[str, Any]], turns: list[Any]) -> forks.ForkError:
    first = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
    step = next((t.step for t in turns if t.reply is not None and t.reply >= first), len(turns))
    return forks.ForkError(f"replay diverged at step {step}: the checkpointed transcript differs from the "
                           "recorded one (the environment or the recorded controller changed since the run)")


def replay_into(graph: Any, config: dict[str, Any], spec: forks.ForkSpec, trace: Trace, task: Any,
                master_seed: int, turns: list[Any]) -> StateSnapshot:
    """Run the recorded condition's graph on the recorded messages up to step K; its checkpoint there."""
    parent = spec.parent
    env = get_family(task.family).environment(task)
    try:
        window = forks.make_policy(parent["model"]).context_window  # the recorded window: the same evictions
    except Exception as err:  # an API model without its settings here
        raise forks.ForkError(f"cannot rebuild the recorded model {parent['model']!r}: "
                              f"{str(err).splitlines()[0] if str(err) else type(err).__name__}") from None
    controller, memory = CONTROLLERS.make(parent["controller"]), MEMORIES.make(parent["memory"])
    cut = prefix_end(turns, spec.at)
    recorded = [m for m in trace.transcript[:cut] if m.get("role") == "assistant"]
    start_memory(memory, controller, env)
    seed = forks.EpisodeSpec(parent["family"], parent["task_id"], parent["controller"], parent["memory"],
                             parent["model"], "langgraph", int(parent["seed"])).policy_seed(master_seed)
    ep = Episode(EpisodeRun(env), _Recorded(parent["model"], window, recorded), controller, memory,
                 env.schemas(), seed)
    try:
        _invoke(graph, {"transcript": [], "status": _status(ep.run, None)}, config, ep)
    except _AtForkPoint:
        pass
    snapshot = checkpoint_at(graph, config, spec.at)
    if _messages(snapshot.values) != trace.transcript[:cut]:
        raise _diverged(_messages(snapshot.values), trace.transcript[:cut], turns)
    return snapshot


def fork_on_langgraph(spec: forks.ForkSpec, trace: Trace, task: Any, master_seed: int,
                      policy_options: dict[str, Any] | None = None) -> forks.Prefix:
    """Replay into a fresh checkpointer, branch at step K, run the new condition on; the fork's
    live objects at the end (their run holds the fork's transcript and counters)."""
    turns = forks.recorded_turns(spec, trace)
    limit = 3 * (task.budget + 2) + 10
    config = {"configurable": {"thread_id": spec.parent["episode_id"]}, "recursion_limit": limit}
    with open_saver(None) as saver:
        graph = build_graph(saver)
        snapshot = replay_into(graph, config, spec, trace, task, master_seed, turns)
        prefix = forks.replay_prefix(spec, trace, task, master_seed, policy_options)
        run = prefix.run
        if (spec.memory, spec.model) == (spec.parent["memory"], spec.parent["model"]) \
                and run.transcript != _messages(snapshot.values):
            raise forks.ForkError("the fork's replayed prefix differs from the checkpoint it branches from")
        branch = graph.update_state(snapshot.config, {"status": _status(run, None)}, as_node="tools")
        ep = Episode(run, prefix.policy, prefix.controller, prefix.memory, run.env.schemas(), prefix.seed)
        _invoke(graph, None, {**branch, "recursion_limit": limit}, ep)
    return prefix
