"""The DataOps-lite oracle: a reader with perfect judgment and memory, used at build time.

It proves every unit solvable from the pages the tools show (the reader's action passes the
checker), that the checker rejects the untouched or a wrong state, and counts the tool calls:
the pages read, one answer or edit, one checker run, one submit.
"""

from __future__ import annotations

from typing import Any

from pushbench.tasks.dataops import units as du


def apply_edit(files: dict[str, str], path: str, old: str, new: str) -> dict[str, str]:
    text = files[path]
    if text.count(old) != 1:
        raise ValueError(f"{path}: the edit's old text occurs {text.count(old)} times")
    return {**files, path: text.replace(old, new, 1)}


def read_unit(uid: str, q: du.Question, files: dict[str, str], rows: int, lines: int) -> tuple[tuple[str, ...], int]:
    """The reader's action and the number of pages it read to find it."""
    views: du.Views = {}
    pages: dict[str, int] = {}
    while (action := du.derive(q, views)) is None:
        want = du.next_view(q, views, pages, rows)
        if want is None:
            raise ValueError(f"{uid}: the reader finds no answer in the unit's files")
        text = du.render_view(uid, want[0], files[want[0]], want[1], rows, lines)
        view = du.parse_view(text or "")
        if view is None:
            raise ValueError(f"{uid}: page {want} does not render")
        views[want] = view
        pages[view.path] = view.pages
    return action, len(views)


def solve_unit(uid: str, title: str, files: dict[str, str], expected: dict[str, Any], params: dict[str, Any]) -> int:
    q = du.parse_title(title)
    if q is None:
        raise ValueError(f"{uid}: unparsable title {title!r}")
    action, reads = read_unit(uid, q, files, params["page_rows"], params["page_lines"])
    if action[0] == "answer":
        ok, detail = du.check_state(expected, action[1], files)
        wrong_ok, _ = du.check_state(expected, action[1] + "1", files)
    else:
        ok, detail = du.check_state(expected, None, apply_edit(files, *action[1:]))
        wrong_ok, _ = du.check_state(expected, None, files)
    if not ok:
        raise AssertionError(f"{uid}: the reader's action fails its checker: {detail}")
    if wrong_ok:
        raise AssertionError(f"{uid}: the checker accepts a wrong state")
    return reads + 3
