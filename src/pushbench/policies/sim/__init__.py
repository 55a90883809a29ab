"""SimLM: a behavioural model simulator that sees only chat messages and tool schemas.

``SimLM(profile).act(messages, tools, seed)`` returns one assistant turn. It keeps a per-episode
cache of what it has parsed (keyed by the request seed) purely for speed: the same messages and
seed always give the same turn, cached or not. It never opens files: every conclusion comes from
text in the messages, through a family reader, under bounded attention.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any, Callable

from pushbench.policies.base import Turn
from pushbench.policies.sim import memory_skills, summary
from pushbench.policies.sim.profiles import PROFILES, Profile, get_profile, window_suffix
from pushbench.registry import MINDS
from pushbench.tokens import count_tokens


def mind_name(tools: list[dict[str, Any]]) -> str:
    """The registered mind whose declared tool set equals the task's tools (memory tools aside)."""
    names = frozenset(t.get("function", {}).get("name") for t in tools) - memory_skills.MEMORY_TOOLS
    matches = [name for name, entry in MINDS.entries().items() if entry.meta["tools"] == names]
    if len(matches) != 1:
        raise ValueError(f"SimLM has no reader for a task with tools {sorted(n for n in names if n)}"
                         + (f" (several minds declare them: {', '.join(matches)})" if matches else ""))
    return matches[0]


def _mind_class(tools: list[dict[str, Any]]) -> Callable[..., Any]:
    return MINDS.load(mind_name(tools))


class SimLM:
    def __init__(self, profile: str | Profile, cache_size: int = 64):
        self.profile = profile if isinstance(profile, Profile) else get_profile(profile)
        default = PROFILES.get(self.profile.name)
        suffix = window_suffix(self.profile.window) if default and default.window != self.profile.window else ""
        self.name = f"sim/{self.profile.name}{suffix}"
        self.context_window = self.profile.window
        self._minds: OrderedDict[tuple[int, Callable[..., Any]], Any] = OrderedDict()
        self._cache_size = cache_size
        MINDS.entries()  # the family declarations are found now (package metadata), never while deciding

    def _mind(self, seed: int, cls: Callable[..., Any]) -> Any:
        key = (seed, cls)
        mind = self._minds.pop(key, None) or cls(self.profile, seed)
        self._minds[key] = mind
        while len(self._minds) > self._cache_size:
            self._minds.popitem(last=False)
        return mind

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], seed: int) -> Turn:
        if memory_skills.is_summary_request(messages, tools):  # a memory asks for a summary (no tools)
            cls = next((c for s, c in reversed(self._minds) if s == seed), None)
            mind = cls(self.profile, seed) if cls else None
            if summary.size_limit(messages) is not None and not memory_skills.is_item_mind(mind):
                notes = memory_skills.notes_of(mind, messages)  # a note-writing mind's notes come first
                return summary.quoted_summary(self.profile, seed, messages, notes)  # the rolling summary's request
            return memory_skills.summarise(mind, messages)
        mind = self._mind(seed, _mind_class(tools))
        turn = memory_skills.act(mind, messages, tools) if memory_skills.offered(tools) else mind.act(messages, tools)
        turn.input_tokens = mind.reader.total_tokens
        turn.output_tokens = count_tokens(json.dumps(turn.message.get("tool_calls") or turn.message.get("content")))
        return turn


__all__ = ["PROFILES", "Profile", "SimLM", "get_profile"]
