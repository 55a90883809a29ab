"""SWE-lite tools over a private workspace copy: read_file, search_files, edit, run_tests.

``list_units``, ``submit``, ``status`` and ``final`` come from ``UnitEnvironment``. Every path is
confined to the copy (``sandbox.resolve_inside``: relative, no ``..``, no symlink anywhere on the
way); test runs go to the bubblewrap jail (``tasks.swe.runs``). Before every check (``run_tests``
and ``submit``) the tests, conftest files and test configuration are reset to the snapshot, so an
edit under the tests is allowed but can never make a unit pass. Edits encode their text first and
replace the file atomically: an unencodable ``new`` is an error and the file stays as it was. When
the episode ends the workspace is reset to the snapshot for this process's next episode, or removed
(``tasks.swe.pool``).
"""

from __future__ import annotations

import re
from typing import Any

from pushbench.sandbox import PathRefused, UnencodableText
from pushbench.tasks.swe.pool import release
from pushbench.tasks.swe.runs import Workspace, python_files, run_tests
from pushbench.tasks.swe.units import UnitFault
from pushbench.tools.base import Observation, ToolError, tool
from pushbench.tools.units import UNIT_PARAM, CheckResult, UnitEnvironment

MAX_HITS = 30
_BAD_CHARS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")  # control characters other than tab and newline
PATH_PARAM = {"type": "string", "minLength": 1, "maxLength": 300}
OPTIONAL_UNIT = {"type": "string", "maxLength": 40, "default": ""}


def edit_text(text: str, old: str, new: str) -> str:
    """``text`` with the single occurrence of ``old`` replaced by ``new`` (``ToolError`` otherwise)."""
    if not old:
        raise ToolError("old must be non-empty text copied exactly from the file")
    count = text.count(old)
    if count == 0:
        raise ToolError("old text not found in the file (it must match exactly, including indentation); "
                        "read the file again and copy the lines")
    if count > 1:
        raise ToolError(f"old text occurs {count} times in the file; include more surrounding lines so it "
                        "is unique")
    return text.replace(old, new, 1)


class SweEnv(UnitEnvironment):
    read_tools = ("list_units", "status", "read_file", "search_files")
    change_tools = ("edit",)
    checker_tool = "run_tests"

    def __init__(self, task: Any, verifier: Any, workspace: Workspace, faults: dict[str, UnitFault]):
        super().__init__(task, verifier)
        self.workspace = workspace
        self.faults = faults  # env-internal (which tests verify a unit); never shown to the agent
        self.read_lines = int(task.settings.get("read_lines", 120))
        self.current: str | None = None  # the unit the agent last named: edits are attributed to it

    # --- the checker ---------------------------------------------------------------------------
    def check_unit(self, unit_id: str) -> CheckResult:
        tests = list(self.faults[unit_id].tests)
        reset = self.workspace.reset_tests(tests)  # as SWE-bench resets test files before evaluation
        run = run_tests(self.workspace, tests)
        verdict = "all targeted tests pass" if run.passed else "targeted tests fail"
        note = ""
        if reset:
            note = (f"note: {', '.join(reset)} reset to the original before this run (edits to tests, "
                    "conftest.py and test configuration never count; fix the library code)\n")
        return CheckResult(run.passed, f"{note}{verdict}\n{run.shown()}")

    def end(self, reason: str, reported: int | None = None) -> None:
        super().end(reason, reported)
        release(self.workspace)  # reset for this process's next episode, or removed (tasks.swe.pool)

    def _focus(self, unit: str) -> str | None:
        if unit:
            self.unit(unit)
            self.current = unit
            self.note_touch(unit)
        return self.current

    def _path(self, path: str):
        try:
            target = self.workspace.path(path)
        except PathRefused as err:
            raise ToolError(f"path refused: {err}") from None
        if not target.is_file():
            raise ToolError(f"{path} is not a file in the workspace")
        return target

    # --- tools ----------------------------------------------------------------------------------
    @tool("Show numbered lines start..end of a file in the repository copy (at most 120 lines per call). "
          "Optionally name the unit you are working on.",
          path=PATH_PARAM, start={"type": "integer", "minimum": 1, "maximum": 100_000, "default": 1},
          end={"type": "integer", "minimum": 0, "maximum": 100_000, "default": 0}, unit=OPTIONAL_UNIT)
    def read_file(self, path: str, start: int = 1, end: int = 0, unit: str = "") -> Observation:
        focus = self._focus(unit)
        target = self._path(path)
        try:
            lines = target.read_text(encoding="utf-8").split("\n")
        except UnicodeDecodeError:
            raise ToolError(f"{path} is not a UTF-8 text file") from None
        last = min(len(lines), end or start + self.read_lines - 1, start + self.read_lines - 1)
        if start > len(lines):
            raise ToolError(f"{path} has {len(lines)} lines; start {start} is past the end")
        body = "\n".join(f"{n:5d}| {lines[n - 1]}" for n in range(start, last + 1))
        log = self.unit_log(focus) if focus else {"log": {}}
        return Observation(f"{path} lines {start}-{last} of {len(lines)}\n{body}", payload=log)

    @tool("Find an exact text (case-sensitive) in the repository's Python files. Returns up to 30 "
          "matching lines as path:line: text.", query={"type": "string", "minLength": 2, "maxLength": 200})
    def search_files(self, query: str) -> Observation:
        if _BAD_CHARS.search(query) or "\n" in query:
            raise ToolError("query must be one line of text without control characters")
        hits: list[Any] = []
        total = 0
        root = self.workspace.root
        for rel in python_files(root):
            try:
                with open(root / rel, encoding="utf-8") as handle:
                    text = handle.read()
            except (UnicodeDecodeError, OSError):
                continue
            if query not in text:
                continue
            for number, line in enumerate(text.split("\n"), 1):
                if query in line:
                    total += 1
                    if len(hits) < MAX_HITS:
                        hits.append(f"{rel}:{number}: {line.strip()[:160]}")
        head = f'search_files "{query}": {total} matching line{"s" if total != 1 else ""}'
        if total > MAX_HITS:
            head += f" (first {MAX_HITS} shown)"
        return Observation("\n".join([head, *hits]))

    @tool("Replace the single exact occurrence of `old` with `new` in a file of the repository copy "
          "(copy `old` exactly from read_file, without the line-number prefix). Optionally name the unit.",
          path=PATH_PARAM, old={"type": "string", "minLength": 1, "maxLength": 4000},
          new={"type": "string", "maxLength": 4000}, unit=OPTIONAL_UNIT)
    def edit(self, path: str, old: str, new: str, unit: str = "") -> Observation:
        focus = self._focus(unit)
        if _BAD_CHARS.search(old) or _BAD_CHARS.search(new):
            raise ToolError("old and new may not contain control characters other than newline and tab")
        target = self._path(path)
        rel = target.relative_to(self.workspace.root.resolve()).as_posix()
        try:
            text = target.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise ToolError(f"{path} is not a UTF-8 text file") from None
        updated = edit_text(text, old, new)
        try:
            self.workspace.write(rel, updated)
        except UnencodableText as err:
            raise ToolError(f"edit: {err}") from None
        if focus:
            self.note_change(focus)
        first = text[: text.index(old)].count("\n") + 1
        span = new.count("\n") + 1
        shown = "\n".join(f"{n:5d}| {line}" for n, line in
                          enumerate(updated.split("\n")[first - 1: first - 1 + span], first))
        log = self.unit_log(focus) if focus else {"log": {}}
        return Observation(f"edit: {rel} changed at line {first}; the new text reads:\n{shown}", payload=log)

    @tool("Run the unit's targeted tests in the repository copy (sandboxed) and show the output.",
          unit=UNIT_PARAM)
    def run_tests(self, unit: str) -> Observation:
        self._focus(unit)
        return self.checker_observation(unit)

    def submit(self, unit: str) -> Observation:
        self._focus(unit)
        return super().submit(unit)
    submit.__tool__ = UnitEnvironment.submit.__tool__  # type: ignore[attr-defined]
