"""Item-set base: the ``submit(ids)``, ``status()`` and ``final(count)`` tools of every family whose
goal is N distinct valid items (RepoScan, rows). A subclass adds its read tools, says what its
items are called (``item_words``) and when an id is malformed (``id_problem``).

Requirements (``requirements()``): ``count`` (N accepted), ``distinct`` (a repeat counts once) and
``predicate`` (the objective's first sentence: what makes an item valid). Origins, from the tool
name alone: ``submit`` serves all three (its verdicts are what counts), ``status`` and ``final``
serve ``count``, and every read tool (RepoScan's ``search``, rows' ``rows``) serves ``predicate``
(its hits are the candidates the predicate is decided on). The ids a call names are not used:
an item is not a requirement.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Protocol, runtime_checkable

from pushbench.requirements import Requirement, validate_origins
from pushbench.tools.base import Environment, Observation, ToolError, tool

VERDICTS = ("accepted", "rejected", "duplicate")
SERVES = {"submit": ("count", "distinct", "predicate"), "status": ("count",), "final": ("count",)}
_SENTENCE_END = re.compile(r"\.\s+(?=[A-Z])")


def first_sentence(text: str) -> str:
    """``text`` up to the first full stop that ends a sentence (``6.5`` or ``client.`` do not)."""
    match = _SENTENCE_END.search(text)
    return text[: match.start() + 1] if match else text


@runtime_checkable
class PagedSearch(Protocol):
    """An item-set environment whose ``search(query, page)`` tool pages through a deterministic
    index (the tool role "paged-search", ``tasks/base.ROLES``; RepoScan's). StateQGP's page memory and
    candidate buffer read ``search_index.page(query, page)`` (an object with ``pages`` and ``hits``,
    each hit with ``uid`` and ``rank``) and show buffered hits with ``render_hits(hits)``, the
    family's own hit format. Without it they have nothing to read and stay off."""

    search_index: Any

    def render_hits(self, hits: list[Any]) -> str: ...


class ItemSetEnvironment(Environment):
    # words the tool descriptions use: {"ids": what submit takes, "per_call": its limit's noun,
    # "items": what status counts}
    item_words = {"ids": "identifiers", "per_call": "identifiers", "items": "identifiers"}

    def __init__(self, task: Any, verifier: Any):
        self.max_submit = int(task.settings.get("max_submit", 20))
        super().__init__(task, verifier)
        # The listed schema states the task's real limit; the handler enforces it with a message
        # that says how to split the call, so the compiled validator keeps the schema without it.
        spec = self.tools["submit"]
        ids = {**spec.parameters["properties"]["ids"], "maxItems": self.max_submit}
        self.tools["submit"] = replace(spec, parameters={
            **spec.parameters, "properties": {**spec.parameters["properties"], "ids": ids}})

    def describe_tool(self, name: str, description: str) -> str:
        if name not in ("submit", "status", "final"):
            return description
        return description.format(**self.item_words, max_submit=self.max_submit)

    def requirements(self) -> list[Requirement]:
        n, items = self.task.target, self.item_words["items"]
        return [Requirement("count", f"at least {n} {items} accepted by the verifier", "count"),
                Requirement("distinct", f"the {n} {items} must be distinct: a repeated one counts once", "distinct"),
                Requirement("predicate", first_sentence(self.task.objective), "predicate")]

    def action_origins(self, tool: str, arguments: Any) -> tuple[str, ...]:
        if tool not in self.tools:
            return ()
        mapped = SERVES.get(tool, ("predicate",))
        return validate_origins([*mapped, *super().action_origins(tool, arguments)], self.requirements())

    def id_problem(self, item: str) -> str | None:  # pragma: no cover - every subclass says
        """Why ``item`` is not a well-formed id (a sentence naming it), or None."""
        raise NotImplementedError

    @tool("Submit {ids} for verification. Each gets a verdict: accepted, rejected or duplicate "
          "(already submitted). At most {max_submit} {per_call} per call.",
          ids={"type": "array", "items": {"type": "string"}, "minItems": 1})
    def submit(self, ids: list[str]) -> Observation:
        if len(ids) > self.max_submit:
            raise ToolError(f"at most {self.max_submit} ids per submit call; you sent {len(ids)}. "
                            "Nothing was submitted; split them over several calls.")
        for item in ids:
            problem = self.id_problem(item)
            if problem:
                raise ToolError(f"{problem} Nothing was submitted.")
        verdicts = [(item, self.verifier.judge(self.steps, item)) for item in ids]
        counts = {v: sum(1 for _, x in verdicts if x == v) for v in VERDICTS}
        head = ", ".join(f"{n} {v}" for v, n in counts.items())
        body = "\n".join(f"  {verdict:9s} {item}" for item, verdict in verdicts)
        return Observation(f"submit: {head}\n{body}")

    @tool("Show the verified number of accepted {items} and the target.")
    def status(self) -> Observation:
        return Observation(f"status: {self.verifier.valid_count} accepted (verified) of target "
                           f"{self.task.target}; {self.steps} of {self.task.budget} steps used.")

    @tool("End the episode, reporting how many {items} you believe were accepted.",
          count={"type": "integer", "minimum": 0, "maximum": 1_000_000})
    def final(self, count: int) -> Observation:
        return self.claim_final(count)
