"""RepoScan tools: search(query, page), submit(ids), status(), final(count)."""

from __future__ import annotations

import re

from pushbench.search import CodeSearch, Hit, Page
from pushbench.tools.base import Environment, Observation, ToolError, has_control_chars, tool

MAX_QUERY_CHARS = 200
MAX_PAGE = 1_000
_ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_./-]*\.py::[A-Za-z_][A-Za-z0-9_.]*$")


def check_identifier(item: str) -> str | None:
    """Why ``item`` is not a well-formed identifier, or None."""
    if has_control_chars(item):
        return "contains control characters"
    if len(item) > 300:
        return "is longer than 300 characters"
    path = item.split("::", 1)[0]
    if path.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", path):
        return "is an absolute path"
    if ".." in path.split("/"):
        return "contains '..'"
    if not _ID.match(item):
        return "is not of the form relative/path.py::Qualified.name"
    return None


def render_page(page: Page) -> str:
    if not page.hits:
        return (f'search "{page.query}": no results on page {page.page} '
                f"({page.total} results in {page.pages} page{'s' if page.pages != 1 else ''}).")
    return f'search "{page.query}": page {page.page} of {page.pages} ({page.total} results)\n' + render_hits(page.hits)


def render_hits(hits: list[Hit]) -> str:
    lines = []
    for hit in hits:
        lines.append(f"[{hit.rank}] {hit.uid}")
        lines.extend(f"    L{n}: {text}" for n, text in hit.snippet)
    return "\n".join(lines)


class RepoScanEnv(Environment):
    def __init__(self, task, search: CodeSearch, verifier):
        super().__init__(task, verifier)
        self.search_index = search
        self.max_submit = int(task.settings.get("max_submit", 20))

    @tool("Ranked code search over the repository. Returns 10 hits per page, each an identifier with "
          "a snippet (signature, first docstring line, lines matching the query).",
          query={"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS},
          page={"type": "integer", "minimum": 1, "maximum": MAX_PAGE, "default": 1})
    def search(self, query: str, page: int = 1) -> Observation:
        if has_control_chars(query) or not query.strip():
            raise ToolError("query must be non-empty text without control characters")
        result = self.search_index.page(query.strip(), page)
        return Observation(render_page(result), payload={"log": {
            "results": result.total, "pages": result.pages, "ids": [h.uid for h in result.hits]}})

    @tool("Submit identifiers for verification. Each gets a verdict: accepted, rejected or duplicate "
          "(already submitted). At most 20 identifiers per call.",
          ids={"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 200})
    def submit(self, ids: list[str]) -> Observation:
        if len(ids) > self.max_submit:
            raise ToolError(f"at most {self.max_submit} ids per submit call; you sent {len(ids)}. "
                            "Nothing was submitted; split them over several calls.")
        for item in ids:
            problem = check_identifier(item)
            if problem:
                raise ToolError(f"id {item[:80]!r} {problem}. Nothing was submitted.")
        verdicts = [(item, self.verifier.judge(self.steps, item)) for item in ids]
        counts = {v: sum(1 for _, x in verdicts if x == v) for v in ("accepted", "rejected", "duplicate")}
        head = ", ".join(f"{n} {v}" for v, n in counts.items())
        body = "\n".join(f"  {verdict:9s} {item}" for item, verdict in verdicts)
        return Observation(f"submit: {head}\n{body}")

    @tool("Show the verified number of accepted identifiers and the target.")
    def status(self) -> Observation:
        return Observation(f"status: {self.verifier.valid_count} accepted (verified) of target "
                           f"{self.task.target}; {self.steps} of {self.task.budget} steps used.")

    @tool("End the episode, reporting how many identifiers you believe were accepted.",
          count={"type": "integer", "minimum": 0, "maximum": 1_000_000})
    def final(self, count: int) -> Observation:
        self.end("final", reported=count)
        return Observation(f"final: episode ended; you reported {count}.", done=True)
