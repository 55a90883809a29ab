"""DataOps-lite tools over a per-episode copy of the backlog's fixture files.

``list_units``, ``submit``, ``status`` and ``final`` come from the work-unit base. Here:
``inspect(unit, path, page)``, ``answer(unit, value)``, ``edit(unit, path, old, new)`` and
``run_checker(unit)``. Each unit's files live in ``<episode dir>/<unit>/``; a path is relative
to that folder, and absolute paths, ``..``, backslashes and symlinks are refused, so no call
reads or writes outside the copy. Edits encode their text first and replace the file atomically
(``sandbox.files``). The copy is removed when the episode ends.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import weakref
from pathlib import Path
from typing import Any

from pushbench.sandbox.files import UnencodableText, write_text_atomic
from pushbench.sandbox.process import MAX_NAME_BYTES
from pushbench.tasks.dataops import units as du
from pushbench.tools.base import Observation, ToolError, has_control_chars, tool
from pushbench.tools.units import UNIT_PARAM, CheckResult, UnitEnvironment

MAX_TEXT = 2_000
_EDIT_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")  # newlines and tabs are allowed in edits
PATH_PARAM = {"type": "string", "maxLength": 200}


class DataOpsEnv(UnitEnvironment):
    read_tools = ("list_units", "status", "inspect")
    change_tools = ("answer", "edit")
    checker_tool = "run_checker"

    def __init__(self, task: Any, verifier: Any, expected: dict[str, dict[str, Any]],
                 files: dict[str, dict[str, str]]):
        super().__init__(task, verifier)
        self.expected = expected
        self.answers: dict[str, str] = {}
        self.page_rows = int(task.settings.get("page_rows", 20))
        self.page_lines = int(task.settings.get("page_lines", 40))
        self.workspace = Path(tempfile.mkdtemp(prefix="pushbench-dataops-"))
        self._cleanup = weakref.finalize(self, shutil.rmtree, str(self.workspace), True)
        for uid, unit_files in files.items():
            for rel, text in unit_files.items():
                target = self.workspace / uid / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")

    def end(self, reason: str, reported: int | None = None) -> None:
        super().end(reason, reported)
        self._cleanup()

    # --- paths inside the copy -----------------------------------------------------------------
    def unit_dir(self, unit: str) -> Path:
        return self.workspace / unit

    def resolve(self, unit: str, path: str) -> Path:
        """The file ``path`` of ``unit`` inside the episode's copy, or a ToolError."""
        if not path or has_control_chars(path):
            raise ToolError("path must be a non-empty relative path without control characters")
        if path.startswith(("/", "~")) or "\\" in path or re.match(r"^[A-Za-z]:", path):
            raise ToolError(f"path {path[:80]!r} is absolute; paths are relative to the unit's folder")
        parts = path.split("/")
        if any(p in ("", ".", "..") for p in parts):
            raise ToolError(f"path {path[:80]!r} contains '..', '.' or an empty part; use a plain relative path")
        if any(len(p.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES for p in parts):
            raise ToolError(f"a part of path {path[:80]!r} is longer than a file name may be ({MAX_NAME_BYTES} bytes)")
        base = self.unit_dir(unit)
        current = base
        for part in parts:
            current = current / part
            if current.is_symlink():
                raise ToolError(f"path {path[:80]!r} goes through a symbolic link; links are not followed")
        if not current.resolve().is_relative_to(base.resolve()) or not current.is_file():
            raise ToolError(f"unit {unit} has no file {path[:80]!r}; its files are: {', '.join(self.files_of(unit))}")
        return current

    def files_of(self, unit: str) -> list[str]:
        base = self.unit_dir(unit)
        return sorted(p.relative_to(base).as_posix() for p in base.rglob("*") if p.is_file() and not p.is_symlink())

    def _is_repair(self, unit: str) -> bool:
        return "file" in self.expected[unit]

    # --- tools -----------------------------------------------------------------------------------
    @tool("Read a unit. Without a path: the unit's task and its files. With a path: one page of that "
          "file (CSV files: 20 rows per page with their row numbers; text files: 40 lines per page).",
          unit=UNIT_PARAM, path={**PATH_PARAM, "default": ""},
          page={"type": "integer", "minimum": 1, "maximum": 100_000, "default": 1})
    def inspect(self, unit: str, path: str = "", page: int = 1) -> Observation:
        record = self.unit(unit)
        self.note_touch(unit)
        if not path:
            lines = [f"{unit} [{record.info.kind}] {record.info.title}", "files:"]
            for rel in self.files_of(unit):
                text = (self.unit_dir(unit) / rel).read_text(encoding="utf-8")
                lines.append("  " + self._describe(rel, text))
            return Observation("\n".join(lines), payload=self.unit_log(unit))
        text = self.resolve(unit, path).read_text(encoding="utf-8", errors="replace")
        view = du.render_view(unit, path, text, page, self.page_rows, self.page_lines)
        if view is None:
            raise ToolError(f"{path} has no page {page}; {self._describe(path, text)}")
        return Observation(view, payload=self.unit_log(unit, path=path, page=page))

    def _describe(self, rel: str, text: str) -> str:
        n = len(text.splitlines())
        if rel.endswith(".csv"):
            rows = max(0, n - 1)
            return f"{rel}: {rows} data rows, {du.page_count(rows, self.page_rows)} page(s)"
        return f"{rel}: {n} lines, {du.page_count(n, self.page_lines)} page(s)"

    @tool("Give (or replace) the answer of a question unit (CSV field checks, consistency answers).",
          unit=UNIT_PARAM, value={"type": "string", "minLength": 1, "maxLength": 200})
    def answer(self, unit: str, value: str) -> Observation:
        self.unit(unit)
        if self._is_repair(unit):
            raise ToolError(f"{unit} is a file repair; change the file with edit(unit, path, old, new)")
        if has_control_chars(value) or not value.strip():
            raise ToolError("value must be non-empty text without control characters")
        self.answers[unit] = value
        self.note_change(unit)
        return Observation(f"answer {unit}: recorded {value.strip()[:80]!r}. Run run_checker({unit}) to check it.",
                           payload=self.unit_log(unit))

    @tool("Edit a file of a repair unit: replace the exact text `old` (it must occur exactly once) with "
          "`new`. Newlines are allowed in both.",
          unit=UNIT_PARAM, path=PATH_PARAM, old={"type": "string", "minLength": 1, "maxLength": MAX_TEXT},
          new={"type": "string", "maxLength": MAX_TEXT})
    def edit(self, unit: str, path: str, old: str, new: str) -> Observation:
        self.unit(unit)
        target = self.resolve(unit, path)
        if not self._is_repair(unit):
            raise ToolError(f"{unit}'s files are read-only data; give its answer with answer(unit, value)")
        if _EDIT_CONTROL.search(old) or _EDIT_CONTROL.search(new):
            raise ToolError("old and new may not contain control characters other than newlines and tabs")
        text = target.read_text(encoding="utf-8")
        count = text.count(old)
        if count != 1:
            hint = "it was not found" if count == 0 else f"it occurs {count} times; include more context"
            raise ToolError(f"edit {unit} {path}: the old text must occur exactly once, but {hint}. Nothing changed.")
        try:  # encoded first, then the file is replaced atomically: no write half-happens
            write_text_atomic(target, text.replace(old, new, 1))
        except UnencodableText as err:
            raise ToolError(f"edit {unit} {path}: {err}") from None
        self.note_change(unit)
        return Observation(f"edit {unit} {path}: replaced 1 occurrence. Run run_checker({unit}) to check it.",
                           payload=self.unit_log(unit, path=path))

    @tool("Run the unit's deterministic checker on its current state (the answer given, or the edited "
          "file): PASS or FAIL with the reason.", unit=UNIT_PARAM)
    def run_checker(self, unit: str) -> Observation:
        return self.checker_observation(unit)

    def check_unit(self, unit_id: str) -> CheckResult:
        expected = self.expected[unit_id]
        files: dict[str, str] = {}
        if "file" in expected:
            path = self.unit_dir(unit_id) / expected["file"]
            if path.is_file() and not path.is_symlink():
                files[expected["file"]] = path.read_text(encoding="utf-8", errors="replace")
        passed, detail = du.check_state(expected, self.answers.get(unit_id), files)
        return CheckResult(passed, detail)
