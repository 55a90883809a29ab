"""Every name the project looks up, in one place: task families, controllers, memories, backends,
model providers and SimLM's per-family minds.

One idiom for all of them: a ``Registry`` maps a name to ``"module:attribute"`` (imported on first
use, so naming a family or a memory never loads the others) and, optionally, keyword arguments
for the factory and metadata. An unknown name raises ``UnknownName`` listing the known ones. To add
one, add a line to the mapping below (or call ``REGISTRY.add(name, "module:attr")`` at run time,
e.g. in a test).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Iterator


class UnknownName(KeyError, ValueError):
    """A name no registry entry has (a KeyError and a ValueError, so either ``except`` works)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


@dataclass(frozen=True)
class Entry:
    target: str  # "package.module:attribute"
    kwargs: dict[str, Any] = field(default_factory=dict)  # passed to the factory by ``make``
    meta: dict[str, Any] = field(default_factory=dict)  # declarations read without importing

    def load(self) -> Any:
        module, _, attr = self.target.partition(":")
        return getattr(importlib.import_module(module), attr)


class Registry:
    """Lazy name -> factory."""

    def __init__(self, kind: str, entries: dict[str, str | Entry]):
        self.kind = kind
        self._entries = {name: e if isinstance(e, Entry) else Entry(e) for name, e in entries.items()}
        self._loaded: dict[str, Any] = {}

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def names(self) -> list[str]:
        return list(self._entries)

    def entry(self, name: str) -> Entry:
        if name not in self._entries:
            raise UnknownName(f"unknown {self.kind} {name!r}; known: {', '.join(self._entries)}")
        return self._entries[name]

    def load(self, name: str) -> Any:
        """The registered object (class or function), imported once."""
        if name not in self._loaded:
            self._loaded[name] = self.entry(name).load()
        return self._loaded[name]

    def make(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """A fresh object from the factory, with the entry's keyword arguments."""
        return self.load(name)(*args, **{**self.entry(name).kwargs, **kwargs})

    def add(self, name: str, target: str | Entry) -> None:
        self._entries[name] = target if isinstance(target, Entry) else Entry(target)
        self._loaded.pop(name, None)

    def remove(self, name: str) -> None:
        self._entries.pop(name, None)
        self._loaded.pop(name, None)


FAMILIES = Registry("task family", {
    "reposcan": "pushbench.tasks.reposcan.family:RepoScanFamily",
    "dataops": "pushbench.tasks.dataops.family:DataOpsFamily",
    "swe": "pushbench.tasks.swe.family:SweFamily",
    "rows": "pushbench.tasks.rows.family:RowsFamily",  # the worked example family
    "corpus": "pushbench.tasks.corpus.family:CorpusFamily",
    "sweissues": "pushbench.tasks.sweissues.family:SweIssuesFamily",
    "planning": "pushbench.tasks.planning.family:PlanningFamily",
})

CONTROLLERS = Registry("controller", {
    "standard": "pushbench.controllers.base:Controller",
    "gated": "pushbench.controllers.gated:GatedController",
    "stateqgp": Entry("pushbench.controllers.stateqgp:StateQGPController", {"name": "stateqgp"}),
    "stateqgp-dedupe": Entry("pushbench.controllers.stateqgp:StateQGPController",
                             {"name": "stateqgp-dedupe", "dedupe": True, "pages": False, "buffer": False}),
    "stateqgp-pages": Entry("pushbench.controllers.stateqgp:StateQGPController",
                            {"name": "stateqgp-pages", "dedupe": False, "pages": True, "buffer": False}),
    "stateqgp-nobuffer": Entry("pushbench.controllers.stateqgp:StateQGPController",
                               {"name": "stateqgp-nobuffer", "dedupe": True, "pages": True, "buffer": False}),
    "unitqgp": Entry("pushbench.controllers.unitqgp:UnitQGPController",
                     meta={"families": ("dataops", "swe")}),  # it steers work units; the runner checks this
})

MEMORIES = Registry("memory", {
    "full": "pushbench.memory.full:FullContext",
    "memgpt": "pushbench.memory.memgpt:MemGPTMemory",
    "langgraph-store": "pushbench.memory.langgraph_store:LangGraphStoreMemory",
    "acg": "pushbench.memory.acg.builder:ACGMemory",
    "summary": "pushbench.memory.summary:SummaryMemory",
})

BACKENDS = Registry("backend", {
    "native": "pushbench.backends.native:run_native",
    "langgraph": Entry("pushbench.backends.langgraph:run_langgraph", meta={
        "resumable": True, "fork": "pushbench.fork_langgraph:fork_on_langgraph"}),  # forks branch its checkpoints
})

PROVIDERS = Registry("model provider", {  # model names are provider/name
    "sim": Entry("pushbench.policies.sim:SimLM", meta={"api": False}),
    "openai": Entry("pushbench.policies.chat:chat_policy", meta={"api": True}),
    "litellm": Entry("pushbench.policies.litellm:litellm_policy", meta={"api": True}),  # the litellm extra
})

# SimLM's per-family minds. Each declares the exact tool set of the family it reads (memory tools
# aside); SimLM takes the mind whose set equals the task's tools, so a new family never gets another
# family's mind by sharing some tool names. Families name their mind (``TaskFamily.mind``) and a test
# checks the two agree.
MINDS = Registry("SimLM mind", {
    "reposcan": Entry("pushbench.tasks.reposcan.mind:RepoScanMind",
                      meta={"tools": frozenset({"search", "submit", "status", "final"})}),
    "dataops": Entry("pushbench.tasks.dataops.mind:DataOpsMind",
                     meta={"tools": frozenset({"list_units", "inspect", "answer", "edit", "run_checker",
                                               "submit", "status", "final"})}),
    "swe": Entry("pushbench.tasks.swe.mind:SweMind",
                 meta={"tools": frozenset({"list_units", "read_file", "search_files", "edit", "run_tests",
                                           "submit", "status", "final"})}),
    "corpus": Entry("pushbench.tasks.corpus.mind:CorpusMind",
                    meta={"tools": frozenset({"search", "get_document", "answer"})}),
    "sweissues": Entry("pushbench.tasks.sweissues.mind:SweIssuesMind",
                       meta={"tools": frozenset({"list_units", "read_file", "search_files", "edit", "run_tests",
                                                 "submit", "final"})}),
    "planning": Entry("pushbench.tasks.planning.mind:PlanningMind",
                      meta={"tools": frozenset({"add", "apply_coupon", "check", "coupons", "details", "remove",
                                                "remove_coupon", "route", "search", "submit", "user_info"})}),
})
