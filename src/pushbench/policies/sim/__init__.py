"""SimLM: a behavioural model simulator that sees only chat messages and tool schemas.

``SimLM(profile).act(messages, tools, seed)`` returns one assistant turn. It keeps a per-episode
cache of what it has parsed (keyed by the request seed) purely for speed: the same messages and
seed always give the same turn, cached or not. It never opens files: every conclusion comes from
text in the messages, through a family reader, under bounded attention.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any

from pushbench.policies.base import Turn
from pushbench.policies.sim import memory_skills
from pushbench.policies.sim.profiles import PROFILES, Profile, get_profile
from pushbench.policies.sim.dataops import DataOpsMind
from pushbench.policies.sim.reposcan import RepoScanMind
from pushbench.policies.sim.swe import SweMind
from pushbench.tokens import count_tokens

MINDS = {frozenset({"list_units", "inspect", "answer", "edit", "run_checker", "submit"}): DataOpsMind,
         frozenset({"list_units", "read_file", "search_files", "edit", "run_tests", "submit"}): SweMind,
         frozenset({"search", "submit", "status", "final"}): RepoScanMind}


def _mind_class(tools: list[dict[str, Any]]) -> type:
    names = frozenset(t.get("function", {}).get("name") for t in tools)
    for required, cls in MINDS.items():
        if required <= names:
            return cls
    raise ValueError(f"SimLM has no reader for a task with tools {sorted(n for n in names if n)}")


class SimLM:
    def __init__(self, profile: str | Profile, cache_size: int = 64):
        self.profile = profile if isinstance(profile, Profile) else get_profile(profile)
        self.name = f"sim/{self.profile.name}"
        self.context_window = self.profile.window
        self._minds: OrderedDict[tuple[int, type], Any] = OrderedDict()
        self._cache_size = cache_size

    def _mind(self, seed: int, cls: type) -> Any:
        key = (seed, cls)
        mind = self._minds.pop(key, None) or cls(self.profile, seed)
        self._minds[key] = mind
        while len(self._minds) > self._cache_size:
            self._minds.popitem(last=False)
        return mind

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], seed: int) -> Turn:
        if memory_skills.is_summary_request(messages, tools):  # a memory asks for a summary (no tools)
            cls = next((c for s, c in reversed(self._minds) if s == seed), RepoScanMind)
            return memory_skills.summarise(cls(self.profile, seed), messages)
        mind = self._mind(seed, _mind_class(tools))
        turn = memory_skills.act(mind, messages, tools) if memory_skills.offered(tools) else mind.act(messages, tools)
        turn.input_tokens = mind.reader.total_tokens
        turn.output_tokens = count_tokens(json.dumps(turn.message.get("tool_calls") or turn.message.get("content")))
        return turn


__all__ = ["PROFILES", "Profile", "SimLM", "get_profile"]
