"""The fuzz driver: one episode of drawn tool calls against a family's environment, and the invariants.

Invariants checked on every call of every episode:

* **no crash**: ``Environment.execute`` returns an ``Observation`` for any call (the suite sets
  ``PUSHBENCH_RAISE_TOOL_ERRORS=1``, so a handler bug raises out of it and fails the test);
* **no tool failure**: ``env.tool_failures`` stays empty;
* **honest count**: the verifier's accepted count never exceeds the distinct submissions that
  were valid (item sets: exactly the hidden-valid ids of accepted submit calls), the ``accepted``
  verdicts shown equal it, ``status`` shows exactly the verified count, and every call is logged;
* **no hidden item revealed**: a hidden value (a valid id, an expected answer, an original line)
  appears in an observation only if the agent already saw it in a reading tool's observation or
  wrote it itself in an argument (see each family's ``hits`` and ``allowed``); no observation
  names a workspace, the project root or ``data/hidden``;
* **confinement** (per test, ``conftest.tree_digest``): no file of the snapshots, ``data/`` or the
  bundled data sets changes; a workspace is gone once its episode ends.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from pushbench import config
from pushbench.tasks.base import TaskSpec
from pushbench.tools.base import MAX_ARGUMENT_CHARS, Observation, ToolCall

from fuzz_strategies import ROLL, Pool, arguments, nested, tool_name

PROFILE = os.environ.get("PUSHBENCH_FUZZ", "quick").lower()
FULL = PROFILE == "full"


@dataclass
class Tally:
    """Counts per family over every episode of one run (printed by ``make fuzz``)."""

    calls: int = 0
    invalid: int = 0
    accepted: int = 0
    episodes: int = 0
    held_back: int = 0  # calls of an open known bug (see ``FamilyFuzz.known_bug``), not sent
    observations: set[int] = field(default_factory=set)
    by_tool: dict[str, list[int]] = field(default_factory=dict)  # tool -> [calls, invalid]

    def row(self) -> dict[str, int]:
        return {"episodes": self.episodes, "calls": self.calls, "invalid": self.invalid,
                "accepted": self.accepted, "distinct_observations": len(self.observations),
                "held_back": self.held_back}


TALLIES: dict[str, Tally] = {}


def args_text(arguments: Any) -> str:
    """Everything the agent wrote in a call's arguments, in the forms an echo may take."""
    if isinstance(arguments, str):
        return arguments
    try:
        dumped = json.dumps(arguments, ensure_ascii=False, default=str)
    except (ValueError, RecursionError):
        dumped = ""
    strings: list[str] = []

    def walk(value: Any, depth: int = 0) -> None:
        if depth > 50:
            return
        if isinstance(value, str):
            strings.append(value)
            strings.append(repr(value))
        elif isinstance(value, dict):
            for k, v in value.items():
                walk(k, depth + 1)
                walk(v, depth + 1)
        elif isinstance(value, list):
            for v in value:
                walk(v, depth + 1)

    walk(arguments)
    return "\n".join([dumped, *strings])


def parsed(arguments: Any) -> dict[str, Any] | None:
    """The call's arguments as the environment accepted them (for a call that succeeded)."""
    if isinstance(arguments, dict):
        return arguments
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


class FamilyFuzz:
    """A family's part of the fuzz: its env, plausible values, hidden values and accounting."""

    family = ""
    free_tools: tuple[str, ...] = ()  # reading tools: what they show is seen by the agent
    kinds: dict[str, str] = {}  # property name -> pool kind
    weights: dict[str, int] = {}  # relative draw weight of each real tool
    status_pattern = re.compile(r"")

    def __init__(self, task: TaskSpec):
        self.task = task

    # --- per family -----------------------------------------------------------------------------
    def make_env(self, budget: int) -> Any:
        raise NotImplementedError

    def harvest(self, name: str, obs: Observation, pool: Pool) -> None:
        """Put plausible values this observation shows into the pool."""

    def hits(self, env: Any, name: str, args: dict[str, Any] | None, text: str) -> list[str]:
        """Hidden values that occur in this observation's text."""
        raise NotImplementedError

    def allowed(self, env: Any, hit: str) -> bool:
        """A hit that is visible without the verifier (e.g. present in the agent's own copy)."""
        return False

    def check_accounting(self, env: Any, episode: "Episode") -> None:
        raise NotImplementedError

    def close(self, env: Any) -> None:
        env.end("fuzz-cleanup")

    def workspace_gone(self, env: Any) -> bool:
        return True

    def coherent_call(self, draw: Any, env: Any) -> ToolCall | None:
        """A call a working agent would make (e.g. the repair a reader derives from the files), so the
        accepting paths are fuzzed too; None when the family has none."""
        return None

    def known_bug(self, name: str, arguments: Any) -> str | None:
        """A call that triggers an open bug (its reproducer an xfail test in test_fuzz_known_bugs.py),
        held back so the other invariants stay checked; None for every other call. No bug is open:
        the five the fuzz found (deep nesting, lone surrogates in paths and edits, over-long file
        names) are fixed and their reproducers are ordinary regression tests."""
        return None




@dataclass
class Episode:
    """What one episode did, seen from outside the environment."""

    calls: int = 0
    executed: int = 0
    accepted_lines: int = 0
    submitted: list[Any] = field(default_factory=list)  # arguments of submit calls that succeeded
    agent_text: list[str] = field(default_factory=list)
    seen_text: list[str] = field(default_factory=list)
    seen_hits: set[str] = field(default_factory=set)


FORBIDDEN = ("data/hidden", str(config.ROOT), str(config.HIDDEN.resolve()))


def run_episode(data: st.DataObject, fuzz: FamilyFuzz, max_calls: int,
                seeds: dict[str, tuple[str, ...]] | None = None) -> None:
    """Draw and execute up to ``max_calls`` calls, checking every invariant after each."""
    tally = TALLIES.setdefault(fuzz.family, Tally())
    real_budget = data.draw(st.integers(0, 5)) == 5  # else a budget the calls cannot exhaust
    n_calls = max_calls - data.draw(st.integers(0, max_calls - 1))  # long episodes are the common case
    env = fuzz.make_env(fuzz.task.budget if real_budget else n_calls + 5)
    # what the agent is given before any call: the objective, the backlog's titles, the tool schemas
    shown = [fuzz.task.objective, *(u["title"] for u in fuzz.task.settings.get("units", [])),
             json.dumps(env.schemas(), ensure_ascii=False), f"the limit is {MAX_ARGUMENT_CHARS}"]
    episode = Episode(seen_text=shown)
    pool = Pool()
    for kind, values in (seeds or {}).items():
        for value in values:
            pool.add(kind, value)
    names = sorted(env.tools)
    try:
        for _ in range(n_calls):
            call = fuzz.coherent_call(data.draw, env) if data.draw(ROLL) >= 85 and not env.done else None
            if call is None:
                name = tool_name(data.draw, names, fuzz.weights)
                spec = env.tools.get(name)
                params = spec.parameters if spec else {"properties": {"page": {"type": "integer"}}}
                call = ToolCall(name, arguments(data.draw, params, pool, fuzz.kinds))
            if fuzz.known_bug(call.name, call.arguments):
                tally.held_back += 1
                continue
            step(env, fuzz, episode, pool, tally, call)
    finally:
        tally.episodes += 1
        tally.accepted += env.verifier.valid_count
        fuzz.close(env)
    assert fuzz.workspace_gone(env), "the episode's workspace is still on disk after the episode ended"


def step(env: Any, fuzz: FamilyFuzz, episode: Episode, pool: Pool, tally: Tally, call: ToolCall) -> None:
    was_done = env.done
    obs = env.execute(call)  # no crash: any exception here fails the test with the drawn calls
    assert isinstance(obs, Observation) and isinstance(obs.text, str)
    episode.calls += 1
    episode.executed += 0 if was_done else 1
    tally.calls += 1
    tally.invalid += 0 if obs.ok else 1
    tally.observations.add(hash(obs.text))
    counts = tally.by_tool.setdefault(call.name if call.name in env.tools else "<unknown>", [0, 0])
    counts[0] += 1
    counts[1] += 0 if obs.ok else 1
    assert env.tool_failures == [], env.tool_failures
    args = parsed(call.arguments) if obs.ok else None
    episode.agent_text.append(args_text(call.arguments) + "\n" + call.name)
    check_leaks(env, fuzz, episode, call.name if not was_done else "", args, obs.text)
    if obs.ok:
        fuzz.harvest(call.name, obs, pool)
    if obs.ok and call.name == "submit" and args is not None:
        episode.submitted.append(args)
        episode.accepted_lines += count_accepted(obs.text)
    if obs.ok and call.name == "status":
        check_status(env, fuzz, obs.text)
    check_log(env, episode)
    fuzz.check_accounting(env, episode)


_QUOTED = re.compile(r"'([^'\n]*)'|\"([^\"\n]*)\"")


def without_echoes(text: str, own: str) -> str:
    """``text`` with every quoted piece that the call's own arguments hold blanked out: an error
    that repeats the agent's bad path back (``unit 'data/hidden' is not a unit id``) reveals
    nothing the agent did not write."""
    return _QUOTED.sub(lambda m: "''" if (m.group(1) or m.group(2) or "") in own else m.group(0), text)


def count_accepted(text: str) -> int:
    return sum(1 for line in text.splitlines()
               if re.match(r"^\s+accepted\s", line) or re.match(r"^submit \S+: accepted", line))


def check_leaks(env: Any, fuzz: FamilyFuzz, episode: Episode, name: str, args: dict[str, Any] | None,
                text: str) -> None:
    shown = without_echoes(text, episode.agent_text[-1] if episode.agent_text else "")
    for bad in FORBIDDEN:
        assert bad not in shown, f"observation names {bad!r}: {text[:300]!r}"
    for path in workspace_paths(env):
        assert path not in text, f"observation names the workspace path: {text[:300]!r}"
    text = text.split("\n[The step budget of ", 1)[0]  # the budget note: public numbers
    hits = [] if name == "status" else fuzz.hits(env, name, args, text)  # status: see check_status
    if not hits:
        return
    if name in fuzz.free_tools:
        episode.seen_hits.update(hits)
        episode.seen_text.append(text)
        return
    agent = "\n".join(episode.agent_text)
    seen = "\n".join(episode.seen_text)
    for hit in hits:
        shown = hit in episode.seen_hits or hit in agent or hit in seen or fuzz.allowed(env, hit)
        assert shown, f"{name} revealed the hidden value {hit!r} the agent was never shown:\n{text[:500]}"


def workspace_paths(env: Any) -> list[str]:
    ws = getattr(env, "workspace", None)
    base = getattr(ws, "base", ws)
    return [str(base)] if base is not None else []


def check_status(env: Any, fuzz: FamilyFuzz, text: str) -> None:
    match = fuzz.status_pattern.fullmatch(text.split("\n[", 1)[0])
    assert match, f"status text has an unexpected form: {text!r}"
    accepted, target, used, budget = (int(x) for x in match.groups())
    assert (accepted, target, used, budget) == (env.verifier.valid_count, env.task.target, env.steps,
                                                env.task.budget)


def check_log(env: Any, episode: Episode) -> None:
    calls = sum(1 for e in env.verifier.events if e["kind"] == "call")
    assert calls == env.steps == min(episode.executed, env.task.budget)
    assert env.verifier.valid_count == len(env.verifier.accepted)


def deep_arguments(depth: int = 3_000) -> tuple[str, Any]:
    """The deep-nesting reproducer: as JSON text and as an already parsed value."""
    return "{\"page\": " + "[" * depth + "]" * depth + "}", {"page": nested(depth)}
