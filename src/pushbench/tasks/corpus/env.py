"""The corpus family's tools: search(query) over the BM25 index, get_document(doc_id, page) and
answer(text, confidence), which ends the episode. Each takes the optional ``requirement`` argument
(a clue id, ``clue:<k>``); ``answer`` serves every clue.

What the verifier logs (never shown to the agent): the hit ids of a search, whether an opened
document is one of the clues' evidence documents, and the normalised answer with its verdict.
"""

from __future__ import annotations

from typing import Any

from pushbench.requirements import Requirement, requirement_argument, validate_origins
from pushbench.tasks.base import TaskSpec
from pushbench.tasks.corpus.answers import normalise, normalise_parts
from pushbench.tasks.corpus.build import Document
from pushbench.tasks.corpus.index import CorpusIndex
from pushbench.tools.base import Environment, Observation, ToolError, has_control_chars, tool
from pushbench.verifier import Verifier

REQUIREMENT = {"type": "string", "maxLength": 40, "default": "",
               "description": "optional: the clue id this call works on, e.g. clue:1"}


class CorpusEnv(Environment):
    def __init__(self, task: TaskSpec, verifier: Verifier, index: CorpusIndex, evidence: set[str],
                 parts: tuple[str, ...] = ()):
        super().__init__(task, verifier)
        self.index = index
        self._evidence = evidence  # verifier-side: only logged, never shown
        self._parts = parts  # verifier-side (a long question's normalised part answers): only logged
        self.page_chars = int(task.settings["page_chars"])
        self.snippet_chars = int(task.settings["snippet_chars"])
        self.top_k = int(task.settings["top_k"])

    def describe_tool(self, name: str, description: str) -> str:
        """The search tool states the question's ``top_k`` (5; a long question's is larger)."""
        if name == "search":
            return description.replace("the top 5 documents", f"the top {int(self.task.settings['top_k'])} documents")
        return description

    # --- requirements --------------------------------------------------------------------
    def requirements(self) -> list[Requirement]:
        return [Requirement(f"clue:{k}", text, "clue") for k, text in enumerate(self.task.settings["clues"], 1)]

    def action_origins(self, tool: str, arguments: Any) -> tuple[str, ...]:
        if tool == "answer":
            return tuple(r.id for r in self.requirements())
        return super().action_origins(tool, arguments)

    def _check_requirement(self, requirement: str) -> None:
        if requirement and not validate_origins(requirement_argument({"requirement": requirement}),
                                                self.requirements()):
            known = ", ".join(r.id for r in self.requirements())
            raise ToolError(f"unknown requirement {requirement[:40]!r}; this question's clues are {known}.")

    # --- tools ---------------------------------------------------------------------------
    @tool("Search the corpus (BM25 over document titles and texts). Shows the top 5 documents, each "
          "with its id, title and the start of its text.",
          query={"type": "string", "minLength": 1, "maxLength": 500}, requirement=REQUIREMENT)
    def search(self, query: str, requirement: str = "") -> Observation:
        self._check_requirement(requirement)
        if not query.strip() or has_control_chars(query):
            raise ToolError("the query must be non-empty text without control characters.")
        hits = self.index.search(query, self.top_k)
        shown = query.strip()
        if not hits:
            return Observation(f'search "{shown}": no documents match any word of the query.',
                               payload={"log": {"query": shown, "hits": []}})
        lines = [f'search "{shown}": top {len(hits)} documents']
        for rank, hit in enumerate(hits, 1):
            lines += [f"[{rank}] {hit.doc.id} | {hit.doc.title}", "    " + self._snippet(hit.doc)]
        return Observation("\n".join(lines), payload={"log": {"query": shown, "hits": [h.doc.id for h in hits]}})

    def _snippet(self, doc: Document) -> str:
        flat = " ".join(doc.text.split())
        return flat if len(flat) <= self.snippet_chars else flat[: self.snippet_chars].rstrip() + " …"

    @tool("Show one page of a document's text by its id (as search shows it).",
          doc_id={"type": "string", "minLength": 1, "maxLength": 40},
          page={"type": "integer", "minimum": 1, "maximum": 1000, "default": 1}, requirement=REQUIREMENT)
    def get_document(self, doc_id: str, page: int = 1, requirement: str = "") -> Observation:
        self._check_requirement(requirement)
        doc = self.index.by_id.get(doc_id.strip())
        if doc is None:
            raise ToolError(f"no document has the id {doc_id[:40]!r}; use an id that search showed (d + 10 hex digits).")
        pages = max(1, -(-len(doc.text) // self.page_chars))
        if page > pages:
            raise ToolError(f"page {page} is out of range: document {doc.id} has {pages} page(s).")
        body = doc.text[(page - 1) * self.page_chars: page * self.page_chars]
        head = f"document {doc.id} | {doc.title} | page {page} of {pages}"
        log = {"doc_id": doc.id, "page": page, "evidence": doc.id in self._evidence}
        return Observation(f"{head}\n{body}", payload={"log": log})

    @tool("Give your final answer (the entity's dotted name) with your confidence that it is right "
          "(0 to 1). This ends the episode.",
          text={"type": "string", "minLength": 1, "maxLength": 900},
          confidence={"type": "number", "minimum": 0, "maximum": 1}, requirement=REQUIREMENT)
    def answer(self, text: str, confidence: float, requirement: str = "") -> Observation:
        self._check_requirement(requirement)
        stated = normalise_parts(text) if self.task.settings.get("n_parts") else normalise(text)
        if not stated or has_control_chars(text):
            raise ToolError("the answer must be a non-empty name (for a question of parts: a name per part, "
                            "separated by ';') without control characters.")
        verdict = self.verifier.judge(self.steps, stated)
        self.end("final", reported=None)
        log = {"answer": stated, "confidence": float(confidence), "correct": verdict == "accepted"}
        if self._parts:  # how many parts are right, in place (the verdict needs all of them)
            log["parts_correct"] = sum(a == b for a, b in zip(stated.split("; "), self._parts))
        return Observation(f"answer: recorded {text.strip()[:900]!r} (confidence {confidence:g}); the episode ends.",
                           done=True, payload={"log": log})
