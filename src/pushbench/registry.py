"""Every name the project looks up, in one place: task families, controllers, memories, backends,
model providers and SimLM's per-family minds.

One idiom for all of them: a ``Registry`` maps a name to ``"module:attribute"`` (imported on first
use, so naming a family or a memory never loads the others) and, optionally, keyword arguments
for the factory and metadata. An unknown name raises ``UnknownName`` listing the known ones. To add
one, add a line to the mapping below (or call ``REGISTRY.add(name, "module:attr")`` at run time,
e.g. in a test).

Task families and their minds are not listed here: each family declares itself in its own package
(``tasks/<name>/__init__.py``: ``FAMILY = Declaration(...)``), and ``FAMILIES`` and ``MINDS``
discover those declarations lazily (``pushbench.tasks.family_entries`` / ``mind_entries``).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Generic, Iterator, TypeVar

if TYPE_CHECKING:  # the registered kinds, for the type checker only (each imports this module)
    from pushbench.backends.native import EpisodeRun
    from pushbench.controllers.base import Controller
    from pushbench.memory.base import ContextBuilder
    from pushbench.policies.base import Policy
    from pushbench.tasks.base import TaskFamily

T = TypeVar("T")  # what an entry's factory makes


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


class Registry(Generic[T]):
    """Lazy name -> factory of ``T`` (``Registry[Controller]``: ``make`` gives a Controller).

    ``discover`` ("module:function") finds entries declared elsewhere, on first need: called with a
    name it may return just that entry (a cheap, targeted look-up), called with None it returns
    every entry. Entries added at run time win over discovered ones.
    """

    def __init__(self, kind: str, entries: dict[str, str | Entry] | None = None, discover: str | None = None):
        self.kind = kind
        self._entries = {name: e if isinstance(e, Entry) else Entry(e) for name, e in (entries or {}).items()}
        self._discover = discover
        self._removed: set[str] = set()
        self._loaded: dict[str, Callable[..., T]] = {}
        self._finder: Callable[[str | None], dict[str, Entry]] | None = None
        self._merged: tuple[Any, dict[str, Entry]] | None = None  # (the finder's dict, every entry)

    def _found(self, name: str | None = None) -> dict[str, Entry]:
        if self._discover is None:
            return {}
        if self._finder is None:
            self._finder = Entry(self._discover).load()
        return self._finder(name)

    def _all(self) -> dict[str, Entry]:
        found = self._found()
        if self._merged is None or self._merged[0] is not found:  # the finder returns one dict until it changes
            every = {n: found[n] for n in sorted(found) if n not in self._removed}
            self._merged = (found, {**every, **self._entries})
        return self._merged[1]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._get(name) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self._all())

    def names(self) -> list[str]:
        return list(self._all())

    def entries(self) -> dict[str, Entry]:
        """Every entry by name (discovered ones included)."""
        return self._all()

    def _get(self, name: str) -> Entry | None:
        if name in self._entries:
            return self._entries[name]
        return None if name in self._removed else self._found(name).get(name)

    def entry(self, name: str) -> Entry:
        found = self._get(name)
        if found is None:
            raise UnknownName(f"unknown {self.kind} {name!r}; known: {', '.join(self.names())}")
        return found

    def load(self, name: str) -> Callable[..., T]:
        """The registered object (class or function), imported once."""
        if name not in self._loaded:
            self._loaded[name] = self.entry(name).load()
        return self._loaded[name]

    def make(self, name: str, *args: Any, **kwargs: Any) -> T:
        """A fresh object from the factory, with the entry's keyword arguments."""
        return self.load(name)(*args, **{**self.entry(name).kwargs, **kwargs})

    def add(self, name: str, target: str | Entry) -> None:
        self._entries[name] = target if isinstance(target, Entry) else Entry(target)
        self._removed.discard(name)
        self._loaded.pop(name, None)
        self._merged = None

    def remove(self, name: str) -> None:
        self._entries.pop(name, None)
        self._removed.add(name)
        self._loaded.pop(name, None)
        self._merged = None

    def forget(self, name: str) -> None:
        """Drop what was imported for ``name`` (its declaration changed)."""
        self._loaded.pop(name, None)


# Each family declares itself in its package (``pushbench.tasks``, ``tasks/base.Declaration``).
FAMILIES: Registry[TaskFamily] = Registry("task family", discover="pushbench.tasks:family_entries")

CONTROLLERS: Registry[Controller] = Registry("controller", {
    "standard": "pushbench.controllers.base:Controller",
    "gated": "pushbench.controllers.gated:GatedController",
    # ``needs``: the tool roles (tasks/base.ROLES) a family must declare; the runner checks them
    "stateqgp": Entry("pushbench.controllers.stateqgp:StateQGPController", {"name": "stateqgp"}),
    "stateqgp-dedupe": Entry("pushbench.controllers.stateqgp:StateQGPController",
                             {"name": "stateqgp-dedupe", "dedupe": True, "pages": False, "buffer": False}),
    "stateqgp-pages": Entry("pushbench.controllers.stateqgp:StateQGPController",
                            {"name": "stateqgp-pages", "dedupe": False, "pages": True, "buffer": False},
                            meta={"needs": ("paged-search",)}),
    "stateqgp-nobuffer": Entry("pushbench.controllers.stateqgp:StateQGPController",
                               {"name": "stateqgp-nobuffer", "dedupe": True, "pages": True, "buffer": False},
                               meta={"needs": ("paged-search",)}),
    "unitqgp": Entry("pushbench.controllers.unitqgp:UnitQGPController", meta={"needs": ("units",)}),
})

MEMORIES: Registry[ContextBuilder] = Registry("memory", {
    "full": "pushbench.memory.full:FullContext",
    "memgpt": "pushbench.memory.memgpt:MemGPTMemory",
    "langgraph-store": "pushbench.memory.langgraph_store:LangGraphStoreMemory",
    "acg": "pushbench.memory.acg.builder:ACGMemory",
    "summary": "pushbench.memory.summary:SummaryMemory",
})

BACKENDS: Registry[EpisodeRun] = Registry("backend", {
    "native": "pushbench.backends.native:run_native",
    "langgraph": Entry("pushbench.backends.langgraph:run_langgraph", meta={
        "resumable": True, "fork": "pushbench.replay.fork_langgraph:fork_on_langgraph"}),  # forks branch its checkpoints
})

PROVIDERS: Registry[Policy] = Registry("model provider", {  # model names are provider/name
    "sim": Entry("pushbench.policies.sim:SimLM", meta={"api": False}),
    "openai": Entry("pushbench.policies.chat:chat_policy", meta={"api": True}),
    "litellm": Entry("pushbench.policies.litellm:litellm_policy", meta={"api": True}),  # the litellm extra
})

# SimLM's per-family minds, one per family that declares one (``Declaration.mind``), under the
# family's name, each with the exact tool set it reads (``meta["tools"]``, memory tools aside).
# SimLM takes the mind whose set equals the task's tools, so a new family never gets another
# family's mind by sharing some tool names.
MINDS: Registry[Any] = Registry("SimLM mind", discover="pushbench.tasks:mind_entries")
