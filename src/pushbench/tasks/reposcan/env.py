"""RepoScan tools: search(query, page), submit(ids), status(), final(count)."""

from __future__ import annotations

import re

from pushbench.tasks.reposcan.search import CodeSearch, Hit, Page
from pushbench.tools.base import Observation, ToolError, has_control_chars, tool
from pushbench.tools.items import ItemSetEnvironment

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


class RepoScanEnv(ItemSetEnvironment):
    def __init__(self, task, search: CodeSearch, verifier):
        super().__init__(task, verifier)
        self.search_index = search

    def id_problem(self, item: str) -> str | None:
        problem = check_identifier(item)
        return f"id {item[:80]!r} {problem}." if problem else None

    def render_hits(self, hits: list[Hit]) -> str:
        """Hits as search shows them (the stateqgp controller re-shows buffered hits this way)."""
        return render_hits(hits)

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
