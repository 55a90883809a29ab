"""Shared helpers for the agent-layer tests (policies, controllers, memory, backends, runner).

Real tasks come from the committed manifests (``data/manifests/reposcan.jsonl``), their hidden
answers from ``data/hidden/reposcan`` and the search index from ``snapshots/src`` — exactly what
``pushbench run`` uses. Tests that need them call :func:`task` (skipped with a hint when absent).

Conversations are built the way the native backend builds them: an assistant message in the
OpenAI chat format (``tool_calls`` with JSON ``arguments``) followed by a ``tool`` message whose
content is what a real :class:`RepoScanEnv` rendered for that call.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any, Callable, Iterable

import pytest

from pushbench import config
from pushbench.policies.base import Turn, text_message, tool_call_message, turn_from_message
from pushbench.tasks.reposcan.search import CodeSearch, search_for
from pushbench.tasks import get_family, load_tasks
from pushbench.tasks.base import TaskSpec
from pushbench.tasks.reposcan.reader import Goal, objective_text, parse_objective
from pushbench.tools.base import ToolCall
from pushbench.tasks.reposcan.env import RepoScanEnv
from pushbench.verifier import Verifier, load_hidden

SYSTEM = "You are an autonomous agent working in a tool environment. Call exactly one tool per turn."
DEFAULT_TASK = "reposcan-requests-fixture-n010"
SEED_QUERY = "test httpbin"  # the seed query SimLM derives from the requests fixture objective


# --------------------------------------------------------------------------- real data


@lru_cache(maxsize=1)
def _tasks() -> dict[str, TaskSpec] | None:
    try:
        tasks = load_tasks("reposcan")
    except FileNotFoundError:
        return None
    return {t.task_id: t for t in tasks}


def data_missing() -> str | None:
    """Why the real tasks cannot be used here, or None."""
    if _tasks() is None:
        return f"no manifest under {config.MANIFESTS}; run `make repro`"
    for repo in ("requests", "flask", "pytest"):
        if not (config.SNAPSHOT_SRC / repo).is_dir():
            return f"snapshot {repo} not extracted at {config.SNAPSHOT_SRC}; run `pushbench snapshots fetch`"
    if not (config.HIDDEN / "reposcan").is_dir():
        return f"no hidden answers under {config.HIDDEN}"
    return None


def task(task_id: str = DEFAULT_TASK) -> TaskSpec:
    reason = data_missing()
    if reason:
        pytest.skip(reason)
    return _tasks()[task_id]


def all_tasks() -> list[TaskSpec]:
    task()  # skip when missing
    return list(_tasks().values())


def valid_ids(task_id: str = DEFAULT_TASK) -> list[str]:
    """The hidden valid set (tests may read it; policies and controllers never do)."""
    task(task_id)
    return sorted(load_hidden("reposcan", task_id)["valid"])


def index_for(spec: TaskSpec) -> CodeSearch:
    return search_for(config.SNAPSHOT_SRC / spec.repo, spec.settings["max_results"], spec.settings["page_size"])


def make_env(task_id: str = DEFAULT_TASK, accepts: Callable[[str], bool] | None = None,
             **changes: Any) -> RepoScanEnv:
    """A fresh environment for a real task; ``accepts`` swaps the hidden check, ``changes`` the spec."""
    spec = task(task_id)
    if changes:
        spec = spec.model_copy(update=changes)
    if accepts is None and not changes:
        return get_family("reposcan").environment(spec)
    if accepts is None:
        accepts = frozenset(valid_ids(task_id)).__contains__
    return RepoScanEnv(spec, index_for(spec), Verifier(spec.task_id, spec.target, accepts))


def objective(spec: TaskSpec, target: int | None = None) -> str:
    """The task's objective text, optionally with another target N (what SimLM reads)."""
    goal = parse_objective(spec.objective)
    assert goal is not None
    if target is None:
        return spec.objective
    return objective_text(Goal(goal.repo, goal.predicate, goal.arg, target))


def page_ids(env: RepoScanEnv, query: str, page: int = 1) -> list[str]:
    return [h.uid for h in env.search_index.page(query, page).hits]


# --------------------------------------------------------------------------- conversations


class Conversation:
    """A chat transcript in the OpenAI format, built from calls executed on a real environment."""

    def __init__(self, env: RepoScanEnv, target: int | None = None, system: str = SYSTEM):
        self.env = env
        self.messages: list[dict[str, Any]] = [
            {"role": "system", "content": system},
            {"role": "user", "content": objective(env.task, target)},
        ]
        self._n = 0

    @property
    def tools(self) -> list[dict[str, Any]]:
        return self.env.schemas()

    def call(self, name: str, args: dict[str, Any] | str | None = None) -> str:
        """Append the assistant's tool call and the environment's real reply; return the reply."""
        args = {} if args is None else args
        call_id = f"call_{self._n}"
        self._n += 1
        self.messages.append(tool_call_message(name, args, call_id))
        obs = self.env.execute(ToolCall(name, args if isinstance(args, (dict, str)) else json.dumps(args), call_id))
        self.messages.append({"role": "tool", "tool_call_id": call_id, "content": obs.text})
        return obs.text

    def call_with_reply(self, name: str, args: dict[str, Any], reply: str) -> None:
        """An assistant tool call answered by hand-written text (e.g. a controller's intercept)."""
        call_id = f"call_{self._n}"
        self._n += 1
        self.messages.append(tool_call_message(name, args, call_id))
        self.messages.append({"role": "tool", "tool_call_id": call_id, "content": reply})

    def search(self, query: str, page: int = 1) -> str:
        return self.call("search", {"query": query, "page": page})

    def submit(self, ids: list[str]) -> str:
        return self.call("submit", {"ids": list(ids)})


def called(turn: Turn) -> tuple[str, dict[str, Any]] | None:
    """(tool name, parsed arguments) of a turn, or None for a text reply."""
    if turn.call is None:
        return None
    args = turn.call.arguments
    return turn.call.name, json.loads(args) if isinstance(args, str) else args


def actions(transcript: Iterable[dict[str, Any]]) -> list[Any]:
    """The assistant side of a transcript: (tool, arguments) per call, or the text of a reply."""
    out: list[Any] = []
    for message in transcript:
        if message.get("role") != "assistant":
            continue
        calls = message.get("tool_calls") or []
        if calls:
            fn = calls[0]["function"]
            out.append((fn["name"], fn["arguments"]))
        else:
            out.append(("(text)", message.get("content")))
    return out


# --------------------------------------------------------------------------- scripted policies


class ScriptedPolicy:
    """A stub policy replaying assistant messages (then a fallback), recording what it was shown."""

    name = "stub/scripted"

    def __init__(self, replies: Iterable[dict[str, Any]], then: dict[str, Any] | None = None,
                 context_window: int = 1_000_000):
        self.replies = list(replies)
        self.then = then if then is not None else text_message("done")
        self.context_window = context_window
        self.seen: list[list[dict[str, Any]]] = []

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], seed: int) -> Turn:
        self.seen.append([dict(m) for m in messages])
        reply = self.replies.pop(0) if self.replies else self.then
        return turn_from_message(reply, input_tokens=1, output_tokens=1)


def raw_call(name: str, arguments: str, call_id: str = "c") -> dict[str, Any]:
    """An assistant message whose tool call carries ``arguments`` verbatim (possibly malformed)."""
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}]}


def call_msg(name: str, args: dict[str, Any] | None = None, call_id: str = "c") -> dict[str, Any]:
    return tool_call_message(name, args or {}, call_id)
